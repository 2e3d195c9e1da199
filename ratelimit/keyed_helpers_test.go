package ratelimit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// newKeyed returns a keyed limiter named "keyed" on clk, for the tests that hold a keyed
// limiter to a Limiter's rules.
func newKeyed[K comparable](t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *keyed.Limiter[K] {
	t.Helper()
	k, err := keyed.New[K](append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.Name("keyed")}, opts...)...)
	require.NoError(t, err)
	return k
}

// keyedAdmitted counts how many calls of one permit for key pass in a row at the current
// instant.
func keyedAdmitted[K comparable](k *keyed.Limiter[K], key K, atMost int) int {
	n := 0
	for n < atMost && k.TryAcquire(key, 1) == nil {
		n++
	}
	return n
}

// configOf returns the options that set c.
func configOf(c ratelimit.Config) []ratelimit.Option {
	return []ratelimit.Option{ratelimit.Permits(c.Permits), ratelimit.Period(c.Period), ratelimit.MaxWait(c.MaxWait),
		ratelimit.Enabled(!c.Disabled)}
}
