package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// SPEC RC-7, RC-6: a reload that raises a running limiter's quota
// takes effect at once. 1 permit per hour, spent at 0; a second later the reload makes it
// 10 per second: the next permit is free within 100ms, the new emission interval, not an
// hour later, and the calls that follow are spaced 100ms apart.
func TestRC7_ReloadRaisingTheQuotaTakesEffectAtOnce(t *testing.T) {
	props := map[string]string{
		"instances.Search.rateLimiter.permits": "1",
		"instances.Search.rateLimiter.period":  "1h",
	}
	reg, clk := newRegistry(t, resilience.WithProperties(props))
	search, err := resilience.Wrap(reg, "Search", ok, resilience.RateLimiter())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = search(ctx)
	require.NoError(t, err)
	_, err = search(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded, "the hour's permit is spent")

	clk.Advance(time.Second)
	require.NoError(t, reg.Reload(with(props, map[string]string{
		"instances.Search.rateLimiter.permits": "10",
		"instances.Search.rateLimiter.period":  "1s",
	})))
	lim := lookup[*ratelimit.Limiter](t, reg, ratelimit.Layer, "Search")
	r, err := lim.Reserve()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.LessOrEqual(t, r.Delay(), 100*time.Millisecond, "within one new T, not 59m58s")

	clk.Advance(100 * time.Millisecond)
	_, err = search(ctx)
	require.NoError(t, err)
	_, err = search(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	clk.Advance(100 * time.Millisecond)
	_, err = search(ctx)
	require.NoError(t, err, "then one every 100ms")
}
