package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The whole example, on the real clock: about two seconds. The server misbehaves by
// query, so the story is the same on every run; only the times vary.
func TestComposition(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())

	// Every call has a result: the retry saved the flaky and slow calls, the fallback
	// answered for the service that is down.
	want := map[string]string{
		"ok-1": "results for ok-1", "ok-2": "results for ok-2", "ok-3": "results for ok-3",
		"ok-4": "results for ok-4", "ok-5": "results for ok-5",
		"flaky-1": "results for flaky-1", "slow-1": "results for slow-1",
		"down-1": "stale results from the cache", "down-2": "stale results from the cache",
	}
	assert.Equal(t, want, rep.Results)

	count := map[policy.EventKind]int{}
	var transitions []string
	for _, e := range rep.Events {
		assert.Equal(t, "CatalogAPI.Search", e.Instance, "every policy has the wrapped function's id (SPEC RG-1)")
		count[e.Kind]++
		if e.Kind == circuitbreaker.EventTransition {
			transitions = append(transitions, e.Attr("from").String()+"→"+e.Attr("to").String())
		}
	}
	assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→closed"}, transitions)
	// SPEC CO-1: the bulkhead is inside the retry (its rejection is retried), the timeout
	// too (each attempt has its own), the breaker too (its rejection ends the retries,
	// SPEC CO-4), and the fallback is outside everything.
	assert.GreaterOrEqual(t, count[bulkhead.EventRejected], 1)
	assert.GreaterOrEqual(t, count[ratelimit.EventWaited], 1)
	assert.Equal(t, 1, count[timeout.EventExceeded])
	assert.Equal(t, 2, count[circuitbreaker.EventRejected])
	// The breaker's rejection is not retried: each of those two calls aborts its retry.
	assert.Equal(t, 2, count[retry.EventAborted])
	assert.Zero(t, count[retry.EventExhausted])
	assert.Equal(t, 2, count[fallback.EventApplied])
	assert.Zero(t, count[ratelimit.EventRejected])
	// SPEC CO-2: the calls the open breaker rejected never reached the server: 5 calls
	// that passed at once, 2 + 2 attempts for flaky-1 and slow-1, 1 for down-1.
	assert.Equal(t, 10, rep.Requests)

	for _, line := range []string{
		"layers, outermost first: Fallback → Retry → CircuitBreaker → RateLimiter → Timeout → Bulkhead → CatalogAPI.Search\n",
		"TimeoutExceeded timeout=200ms",
		`search("down-2") → stale results from the cache`,
		"the server received 10 requests for 9 calls\n",
	} {
		assert.Contains(t, out.String(), line)
	}
}
