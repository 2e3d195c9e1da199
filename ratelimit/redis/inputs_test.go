package redis_test

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// Nil and zero inputs fail with R4C codes, never with a panic.

// A nil client of a known type is no client: R4C-REG-010. (Fault: New panicked reading a
// nil *redis.Client's options.)
func TestNew_NilClientOfAnyType(t *testing.T) {
	for name, c := range map[string]goredis.Scripter{
		"*Client":        (*goredis.Client)(nil),
		"*ClusterClient": (*goredis.ClusterClient)(nil),
		"*Ring":          (*goredis.Ring)(nil),
	} {
		var b backend.Backend
		var err error
		require.NotPanics(t, func() { b, err = rlredis.New(c) }, name)
		assert.Nil(t, b, name)
		assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "%s: %v", name, err)
	}
}

// A store's call with a nil or done context is not sent to Redis: Reserve returns the
// context's error (policy.ErrNilContext for nil), Cancel restores nothing, Available has
// no answer; no event, and Redis's health is unchanged. (Fault: a nil context panicked
// in context.WithTimeout.)
func TestStore_NilOrDoneContextIsNotSent(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: redistest.ClosedAddr(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	var cmds commands
	c.AddHook(&cmds)
	b, err := rlredis.New(c, rlredis.OnFailure(backend.Refused))
	require.NoError(t, err)
	var log events
	cfg := ratelimit.Config{Permits: 2, Period: time.Second}
	st, err := b.Bind(backend.Binding{ID: "ctx", Listener: log.add})
	require.NoError(t, err)
	for _, tc := range []ctxtest.Over{ctxtest.Nil(), ctxtest.Canceled()} {
		require.NotPanics(t, func() {
			g, err := st.Reserve(tc.Ctx, backend.Request{N: 1, MaxWait: time.Second, Permits: cfg.Permits, Period: cfg.Period})
			assert.ErrorIs(t, err, tc.Want)
			assert.Zero(t, g)
			st.Cancel(tc.Ctx, backend.Grant{Prev: 1, Next: 2, At: 3})
			n, ok := st.Available(tc.Ctx, backend.Request{Permits: cfg.Permits, Period: cfg.Period})
			assert.Zero(t, n)
			assert.False(t, ok)
		})
	}
	assert.Empty(t, cmds.take(), "nothing sent")
	assert.Empty(t, log.list, "no event")
}

// Requests the limiter never makes are answered without a round trip, never with a
// panic: fewer than 1 or more than Permits permits, or a request with no rate, are
// refused with no retry-after; Available at no rate has no answer.
func TestStore_RequestsTheLimiterNeverMakes(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: redistest.ClosedAddr(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	var cmds commands
	c.AddHook(&cmds)
	b, err := rlredis.New(c)
	require.NoError(t, err)
	st, err := b.Bind(backend.Binding{ID: "inputs"})
	require.NoError(t, err)
	ctx := context.Background()
	for _, req := range []backend.Request{
		{N: 0, Permits: 2, Period: time.Second}, {N: -1, Permits: 2, Period: time.Second},
		{N: 3, Permits: 2, Period: time.Second}, {N: 1}, {N: 1, Permits: 1},
	} {
		require.NotPanics(t, func() {
			g, err := st.Reserve(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, backend.Grant{Verdict: backend.Refused}, g, "%+v", req)
		})
	}
	require.NotPanics(t, func() {
		n, ok := st.Available(ctx, backend.Request{})
		assert.Zero(t, n)
		assert.False(t, ok)
	})
	assert.Empty(t, cmds.take(), "nothing sent")
}
