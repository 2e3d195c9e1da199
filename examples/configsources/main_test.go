package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The properties file alone: the quota it gives, and the defaults it sets.
func TestFileOnly(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, strings.NewReader(serviceProperties)))
	assert.Equal(t, "SearchAPI.Search: rate limiter 10 per 1s, maxWait 100ms; breaker waitInOpen 30s\n", out.String())
}

// An environment variable overrides the file's key (SPEC RG-4's sources merge, the later
// winning), and adds one the file does not have.
func TestEnvironmentWins(t *testing.T) {
	t.Setenv("R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS", "20")
	t.Setenv("R4C_DEFAULTS_RATELIMITER_MAXWAIT", "0")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, strings.NewReader(serviceProperties)))
	assert.Equal(t, "SearchAPI.Search: rate limiter 20 per 1s, maxWait 0s; breaker waitInOpen 30s\n", out.String())
}

// A misspelt id passes NewRegistry, and UnusedKeys finds it once the function is wrapped.
func TestMisspeltID(t *testing.T) {
	t.Setenv("R4C_INSTANCES_SearchAPI__Serch_RATELIMITER_PERMITS", "20")
	err := run(context.Background(), &bytes.Buffer{}, strings.NewReader(serviceProperties))
	require.Error(t, err)
	assert.Equal(t, "keys that no policy uses (a misspelt id?): [instances.SearchAPI.Serch.rateLimiter.permits]", err.Error())
}

// The file on disk is the one the program embeds, as the docs show it.
func TestFileOnDisk(t *testing.T) {
	b, err := os.ReadFile("service.properties")
	require.NoError(t, err)
	assert.Equal(t, serviceProperties, string(b))
}
