package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// scriptedStore answers every Reserve with grant and counts the calls.
type scriptedStore struct {
	mu    sync.Mutex
	grant backend.Grant
	calls int
	last  backend.Request
}

func (s *scriptedStore) Reserve(ctx context.Context, req backend.Request) (backend.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.last = req
	return s.grant, nil
}
func (s *scriptedStore) Cancel(context.Context, backend.Grant)                  {}
func (s *scriptedStore) Available(context.Context, backend.Request) (int, bool) { return 0, false }
func (s *scriptedStore) called() int                                            { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }
func (s *scriptedStore) Bind(backend.Binding) (backend.Store, error)            { return s, nil }
func (*scriptedStore) LocalShare() int                                          { return 1 }

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
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Admitted}}
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
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Admitted, Wait: -time.Second}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Zero(t, r.Delay())
	require.NoError(t, l.Acquire(context.Background()))
	assert.True(t, l.TryAcquire())
	assert.Empty(t, log, "no wait to publish")

	st.grant = backend.Grant{Verdict: backend.Refused, Wait: -time.Second}
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
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Verdict(99), Wait: time.Second}}
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
	assert.Equal(t, r4c.BadSpec, ce.Code)
}

type noStore struct{}

func (noStore) Bind(backend.Binding) (backend.Store, error) { return nil, nil }
func (noStore) LocalShare() int                             { return 1 }

// Events of a limiter with a backend: a rejection's retry-after is RetryAfter, a
// reservation's wait is Wait, each with the other field zero.
func TestBackend_EventFields(t *testing.T) {
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Refused, Wait: 3 * time.Second}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	assert.False(t, l.TryAcquire())
	_, err := l.Reserve()
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	st.grant = backend.Grant{Verdict: backend.Admitted, Wait: 2 * time.Second}
	_, err = l.Reserve()
	require.NoError(t, err)
	require.Len(t, log, 3)
	for _, e := range log[:2] {
		assert.Equal(t, ratelimit.EventRejected, e.Kind)
		assert.Equal(t, 3*time.Second, e.RetryAfter)
		assert.Zero(t, e.Wait)
	}
	assert.Equal(t, ratelimit.EventWaited, log[2].Kind)
	assert.Equal(t, 2*time.Second, log[2].Wait)
	assert.Zero(t, log[2].RetryAfter)
}

// waitStore answers a Reserve as a backend whose next permit is an hour away would:
// Reserved with that wait when the request may wait that long, Refused otherwise; or, with
// local set, Local. It keeps the MaxWait of each request.
type waitStore struct {
	mu       sync.Mutex
	local    bool
	maxWaits []time.Duration
}

func (s *waitStore) Reserve(_ context.Context, req backend.Request) (backend.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxWaits = append(s.maxWaits, req.MaxWait)
	switch {
	case s.local:
		return backend.Grant{Verdict: backend.Local}, nil
	case req.MaxWait >= time.Hour:
		return backend.Grant{Verdict: backend.Admitted, Wait: time.Hour}, nil
	}
	return backend.Grant{Verdict: backend.Refused, Wait: time.Hour}, nil
}
func (s *waitStore) Cancel(context.Context, backend.Grant)                  {}
func (s *waitStore) Available(context.Context, backend.Request) (int, bool) { return 0, false }
func (s *waitStore) Bind(backend.Binding) (backend.Store, error)            { return s, nil }
func (*waitStore) LocalShare() int                                          { return 1 }
func (s *waitStore) asked() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.maxWaits...)
}

// RL-8 with a backend, for async calls as for sync ones: a permit that would come after
// the caller's deadline is refused at once, unreserved and with no timer armed, with an
// error matching ErrExceeded and context.DeadlineExceeded; the store is asked with the
// time left, not MaxWait. It holds whether the store answers itself or hands the call to
// the in-process fallback (Local). A context without a deadline may still wait MaxWait.
// (Fault: DecorateAsyncFunc asked the store with MaxWait, reserved the permit an hour
// away and failed only when the deadline passed.)
func TestBackend_RL8_AsyncCallPastItsDeadlineIsRefusedAtOnce(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "store", true: "local fallback"}[local], func(t *testing.T) {
			st := &waitStore{local: local}
			clk := clock.NewManual()
			l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(2*time.Hour),
				ratelimit.WithClock(clk), ratelimit.WithBackend(st))
			require.NoError(t, err)
			if local {
				require.True(t, l.TryAcquire(), "the fallback's one permit, spent: the next is an hour away")
			}
			calls := 0
			call := ratelimit.DecorateAsyncFunc(l, func(context.Context, struct{}) *async.Future[int] {
				calls++
				return async.Completed(1)
			})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			f := call(ctx, struct{}{})
			_, done, err := f.Result()
			require.True(t, done, "the future fails at once")
			assert.ErrorIs(t, err, ratelimit.ErrExceeded)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Zero(t, clk.PendingTasks(), "no timer is armed")
			err = l.Acquire(ctx)
			assert.ErrorIs(t, err, ratelimit.ErrExceeded)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Zero(t, calls)
			for _, w := range st.asked()[btoi(local):] {
				assert.LessOrEqual(t, w, time.Minute, "the store is asked with the time left")
			}

			f = call(context.Background(), struct{}{})
			_, done, _ = f.Result()
			assert.False(t, done, "without a deadline the call waits for its permit")
			assert.Equal(t, 1, clk.PendingTasks())
			clk.Advance(time.Hour)
			v, err := f.Await(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 1, v)
			assert.Equal(t, 1, calls)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RL-8 with a backend: only a permit that comes after the deadline makes the refusal
// match context.DeadlineExceeded. A store that refuses with a retry-after before the
// deadline (one that fails closed, say) gives the limiter's plain rejection, whatever the
// caller's deadline, sync or async, with its retry-after in the event. (Fault: any
// refusal of a call whose deadline was nearer than MaxWait matched DeadlineExceeded, and
// a gRPC server answered DeadlineExceeded instead of ResourceExhausted.)
func TestBackend_RL8_RefusalBeforeTheDeadlineIsNotADeadlineError(t *testing.T) {
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Refused, Wait: 100 * time.Millisecond}}
	var log []policy.Event
	l, err := ratelimit.New(ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Hour),
		ratelimit.WithClock(clock.NewManual()), ratelimit.WithBackend(st),
		ratelimit.OnEvent(func(e policy.Event) { log = append(log, e) }))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // nearer than MaxWait
	defer cancel()
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, struct{}) *async.Future[int] { return async.Completed(1) })
	_, done, aerr := call(ctx, struct{}{}).Result()
	require.True(t, done)
	for _, err := range []error{aerr, l.Acquire(ctx)} {
		assert.Same(t, l.Rejection(), err)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
	}
	require.Len(t, log, 2)
	for _, e := range log {
		assert.Equal(t, ratelimit.EventRejected, e.Kind)
		assert.Equal(t, 100*time.Millisecond, e.RetryAfter)
	}

	// The same for a Keyed limiter, whose keys each have a store.
	k, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Hour),
		ratelimit.WithClock(clock.NewManual()), ratelimit.WithBackend(st))
	require.NoError(t, err)
	err = k.Acquire(ctx, "alice", 1)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
}
