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

// The output is the same on every run.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, want, out.String())
}

// SPEC RG-4: the precedence, lowest first: built-in defaults, defaults., code,
// configs.<name>., instances.<id>. (run itself fails if a resolved value is not the one
// its source gives.) A typo is R4C-CFG-001 and names the closest key.
func TestPrecedenceAndTypos(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	assert.Contains(t, s, "  permits  20     from instances.SearchAPI.Search.rateLimiter.permits (code: 10)\n")
	assert.Contains(t, s, "  period   1s     from code\n")
	assert.Contains(t, s, "  maxWait  100ms  from defaults.rateLimiter.maxWait\n")
	assert.Contains(t, s, "  enabled  false  from instances.SearchAPI.Suggest.rateLimiter.enabled\n")
	assert.Contains(t, s, "  permits  5      from configs.geocoding-quota.rateLimiter.permits (code: 50)\n")
	assert.Contains(t, s, "  maxWait  500ms  from configs.geocoding-quota.rateLimiter.maxWait\n")
	assert.Contains(t, s, "R4C-CFG-001: instances.SearchAPI.Search.rateLimiter.maxWiat: unknown configuration key; did you mean instances.SearchAPI.Search.rateLimiter.maxWait?")
	assert.Contains(t, s, "did you mean configs.geocoding-quota.rateLimiter.permits?")
}

const want = `resilience.yaml, flattened:
  configs.geocoding-quota.rateLimiter.maxWait = 500ms
  configs.geocoding-quota.rateLimiter.period = 1s
  configs.geocoding-quota.rateLimiter.permits = 5
  defaults.rateLimiter.maxWait = 100ms
  instances.SearchAPI.Search.rateLimiter.permits = 20
  instances.SearchAPI.Suggest.rateLimiter.enabled = false

SearchAPI.Search (limiter "SearchAPI.Search")
  permits  20     from instances.SearchAPI.Search.rateLimiter.permits (code: 10)
  period   1s     from code
  maxWait  100ms  from defaults.rateLimiter.maxWait
  enabled  true   from built-in default

SearchAPI.Suggest (limiter "SearchAPI.Suggest")
  permits  10     from code
  period   1s     from code
  maxWait  100ms  from defaults.rateLimiter.maxWait
  enabled  false  from instances.SearchAPI.Suggest.rateLimiter.enabled

GeocodingAPI.Geocode (limiter "geocoding", configuration "geocoding-quota")
  permits  5      from configs.geocoding-quota.rateLimiter.permits (code: 50)
  period   1s     from configs.geocoding-quota.rateLimiter.period (code: 1m0s)
  maxWait  500ms  from configs.geocoding-quota.rateLimiter.maxWait
  enabled  true   from built-in default

a typo: instances.SearchAPI.Search.rateLimiter.maxWiat
  R4C-CFG-001: instances.SearchAPI.Search.rateLimiter.maxWiat: unknown configuration key; did you mean instances.SearchAPI.Search.rateLimiter.maxWait?
  code R4C-CFG-001, key instances.SearchAPI.Search.rateLimiter.maxWiat
a typo: configs.geocoding-quota.ratelimiter.permits
  R4C-CFG-001: configs.geocoding-quota.ratelimiter.permits: unknown configuration key; did you mean configs.geocoding-quota.rateLimiter.permits?
  code R4C-CFG-001, key configs.geocoding-quota.ratelimiter.permits
`
