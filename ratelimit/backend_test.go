package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// scriptedStore answers every Reserve with grant and counts the calls.
type scriptedStore struct {
	mu    sync.Mutex
	grant ratelimit.Grant
	calls int
}

func (s *scriptedStore) Reserve(ctx context.Context, _ ratelimit.Request) (ratelimit.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return s.grant, nil
}
func (s *scriptedStore) Cancel(context.Context, ratelimit.Token)                 {}
func (s *scriptedStore) Available(context.Context, ratelimit.Config) (int, bool) { return 0, false }
func (s *scriptedStore) called() int                                             { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }
func (s *scriptedStore) Bind(ratelimit.Binding) (ratelimit.Store, error)         { return s, nil }

// backedLimiter returns a limiter on st, on a manual clock, whose events go to log.
func backedLimiter(t *testing.T, st *scriptedStore, log *[]policy.Event) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(ratelimit.Name("backed"), ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Minute), ratelimit.WithClock(clock.NewManual()), ratelimit.WithBackend(st),
		ratelimit.OnEvent(func(e policy.Event) { *log = append(*log, e) }))
	require.NoError(t, err)
	return l
}

// A call that arrives with a nil or done context asks the backend's store nothing,
// publishes nothing, and returns the limiter's rejection matching the context's error.
// (Fault: a nil context panicked on ctx.Err(); a done one published a rejection.)
func TestBackend_ContextNilOrDoneOnArrival(t *testing.T) {
	st := &scriptedStore{grant: ratelimit.Grant{Outcome: ratelimit.Reserved}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	for _, tc := range []ctxtest.Over{ctxtest.Nil(), ctxtest.Canceled()} {
		var err error
		require.NotPanics(t, func() { err = l.Acquire(tc.Ctx) })
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.ErrorIs(t, err, tc.Want)
	}
	assert.Zero(t, st.called(), "the store was not asked")
	assert.Empty(t, log, "no event")
}

// A store's negative Wait is taken as 0: a reservation is free now and a refusal's
// retry-after is 0, never negative. (Fault: a negative wait from a store became a
// negative delay and a negative event duration.)
func TestBackend_NegativeWaitFromAStore(t *testing.T) {
	st := &scriptedStore{grant: ratelimit.Grant{Outcome: ratelimit.Reserved, Wait: -time.Second}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Zero(t, r.Delay())
	require.NoError(t, l.Acquire(context.Background()))
	assert.True(t, l.TryAcquire())
	assert.Empty(t, log, "no wait to publish")

	st.grant = ratelimit.Grant{Outcome: ratelimit.Refused, Wait: -time.Second}
	r, err = l.Reserve()
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Zero(t, r.Delay(), "retry-after")
	for _, e := range log {
		assert.GreaterOrEqual(t, e.Wait, time.Duration(0), "%v", e)
		assert.GreaterOrEqual(t, e.RetryAfter, time.Duration(0), "%v", e)
	}
}

// An outcome the limiter does not know is a refusal, on every path.
func TestBackend_UnknownOutcomeRefuses(t *testing.T) {
	st := &scriptedStore{grant: ratelimit.Grant{Outcome: ratelimit.Outcome(99), Wait: time.Second}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	assert.False(t, l.TryAcquire())
	assert.Same(t, l.Rejection(), l.Acquire(context.Background()))
	r, err := l.Reserve()
	assert.Same(t, l.Rejection(), err)
	assert.Equal(t, time.Second, r.Delay())
}

// A Backend whose Bind returns neither a Store nor an error fails the build with
// R4C-REG-010 instead of a limiter that would panic on its first call.
func TestBackend_BindWithoutStoreFailsTheBuild(t *testing.T) {
	_, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.WithBackend(noStore{}))
	var ce *policy.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, policy.CodeBadSpec, ce.Code)
}

type noStore struct{}

func (noStore) Bind(ratelimit.Binding) (ratelimit.Store, error) { return nil, nil }

// Events of a limiter with a backend: a rejection's retry-after is RetryAfter, a
// reservation's wait is Wait, each with the other field zero.
func TestBackend_EventFields(t *testing.T) {
	st := &scriptedStore{grant: ratelimit.Grant{Outcome: ratelimit.Refused, Wait: 3 * time.Second}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	assert.False(t, l.TryAcquire())
	_, err := l.Reserve()
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	st.grant = ratelimit.Grant{Outcome: ratelimit.Reserved, Wait: 2 * time.Second}
	_, err = l.Reserve()
	require.NoError(t, err)
	require.Len(t, log, 3)
	for _, e := range log[:2] {
		assert.Equal(t, policy.RateLimiterRejected, e.Kind)
		assert.Equal(t, 3*time.Second, e.RetryAfter)
		assert.Zero(t, e.Wait)
	}
	assert.Equal(t, policy.RateLimiterWaited, log[2].Kind)
	assert.Equal(t, 2*time.Second, log[2].Wait)
	assert.Zero(t, log[2].RetryAfter)
}
