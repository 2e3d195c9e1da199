package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With a Redis server (REDIS_ADDR), the call passes through the shared limiter.
func TestRunWithRedis(t *testing.T) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Redis in CI: .ci/run must start one and set REDIS_ADDR")
		}
		t.Skip("no Redis: set REDIS_ADDR")
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, addr))
	assert.Equal(t, "48.8566,2.3522\n", out.String(), "Redis answered: no fallback")
}

// Without Redis, the Local failure policy lets each instance limit itself: the call
// still passes.
func TestRunWithoutRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, addr))
	assert.Equal(t, "48.8566,2.3522\n(Redis did not answer: this instance limited itself)\n", out.String())
}
