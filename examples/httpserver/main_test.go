package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The output is the same on every run: the example runs on a manual clock. It shows the
// 11th request within a second answered 429 with Retry-After: 1 and the exact RateLimit
// fields (SPEC RL-6, RL-9b), X-Forwarded-For ignored unless its proxy is trusted,
// another client unaffected, and the addresses of one IPv6 /64 sharing one quota.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, want, out.String())
}

const want = `served directly: 10 requests per second per client
  requests 1-10 from 127.0.0.1: 200 OK
  request 11, with a forged X-Forwarded-For: 429 Too Many Requests
    Retry-After: 1
    RateLimit-Policy: "default";q=10;w=1
    RateLimit: "default";r=0;t=1
  GET /healthz: 200 OK (exempt)
  100ms later: 200 OK (one permit every 100ms)
behind a trusted load balancer (127.0.0.1/32):
  requests 1-10 from 203.0.113.7: 200 OK
  request 11 from 203.0.113.7: 429 Too Many Requests, Retry-After: 1, RateLimit: "default";r=0;t=1
  request 1 from 198.51.100.4: 200 OK (another client is unaffected)
  requests 1-10 from 2001:db8:7:1::1 to ::a, one address each: 200 OK
  request 11 from 2001:db8:7:1::b: 429 Too Many Requests (one /64, one quota)
  clients held: 3, of at most 100000
`
