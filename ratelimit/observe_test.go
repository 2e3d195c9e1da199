package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// The outcome recording of rate limiters (OB-1): each admission decision is recorded
// once, with the call's context, and every event reaches the recorder with it.

// observedLimiter returns a limiter with the id "rl" on a manual clock, and the recorder
// its observer made for it.
func observedLimiter(t *testing.T, opts ...ratelimit.Option) (*ratelimit.Limiter, *clock.Manual, *contracttest.Observed) {
	t.Helper()
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	opts = append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.Name("rl"),
		ratelimit.Observe(obs)}, opts...)
	l, err := ratelimit.New(opts...)
	require.NoError(t, err)
	require.Equal(t, []contracttest.ObservedKey{{Layer: ratelimit.Layer, ID: "rl"}}, obs.Order,
		"the observer is asked once, for the instance's layer and id")
	return l, clk, obs.Of(ratelimit.Layer, "rl")
}

// observedKeyed is observedLimiter for a Keyed limiter.
func observedKeyed(t *testing.T, opts ...ratelimit.Option) (*keyed.Limiter[string], *clock.Manual, *contracttest.Observed) {
	t.Helper()
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	opts = append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.Name("rl"),
		keyed.Observe(obs)}, opts...)
	k, err := keyed.New[string](opts...)
	require.NoError(t, err)
	require.Equal(t, []contracttest.ObservedKey{{Layer: ratelimit.Layer, ID: "rl"}}, obs.Order)
	return k, clk, obs.Of(ratelimit.Layer, "rl")
}

func okCall(context.Context, int) (string, error) { return "ok", nil }

func okAsync(context.Context, int) *async.Future[string] { return async.Completed("ok") }

var (
	admitted0 = observe.Outcome{Result: observe.ResultAdmitted}
	rejected  = observe.Outcome{Result: observe.ResultRejected, Err: ratelimit.ErrExceeded}
)

func admittedAfter(d time.Duration) observe.Outcome {
	return observe.Outcome{Result: observe.ResultAdmitted, Wait: d}
}

// OB-1: a decorated synchronous call records ResultAdmitted (Wait 0) or ResultRejected
// once, with its context; its rejection event reaches the recorder with that context.
func TestOB1_LimiterRecordsAdmittedAndRejected(t *testing.T) {
	l, _, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second))
	call := ratelimit.DecorateFunc(l, okCall)
	ctx := contracttest.MarkedContext()

	_, err := call(ctx, 1)
	require.NoError(t, err)
	_, err = call(ctx, 2)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	contracttest.RequireOutcomes(t, rec, admitted0, rejected)
	assert.Same(t, l.Rejection(), rec.Outcomes()[1].Err, "the limiter's own rejection")
	assert.Equal(t, []any{"marker", "marker"}, contracttest.Markers(rec.Contexts()))
	require.Equal(t, []policy.Event{{Kind: ratelimit.EventRejected, Instance: "rl", At: 0,
		RetryAfter: time.Second, Err: l.Rejection()}}, rec.Events())
	assert.Equal(t, []any{"marker"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: a call that waits for its permit is recorded once it holds it, with the wait it
// reserved; its RateLimiterWaited event carries its context.
func TestOB1_LimiterRecordsTheWait(t *testing.T) {
	l, clk, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second))
	call := ratelimit.DecorateFunc(l, okCall)
	ctx := contracttest.MarkedContext()

	_, err := call(ctx, 1)
	require.NoError(t, err)
	clk.Advance(300 * time.Millisecond)
	_, err = call(ctx, 2) // waits 700ms: the manual clock's Sleep moves it
	require.NoError(t, err)
	assert.Equal(t, time.Second, clk.Now())

	contracttest.RequireOutcomes(t, rec, admitted0, admittedAfter(700*time.Millisecond))
	assert.Equal(t, []policy.Event{{Kind: ratelimit.EventWaited, Instance: "rl",
		At: 300 * time.Millisecond, Wait: 700 * time.Millisecond}}, rec.Events())
	assert.Equal(t, []any{"marker"}, contracttest.Markers(rec.EventContexts()))
	assert.Equal(t, []any{"marker", "marker"}, contracttest.Markers(rec.Contexts()))
}

// OB-1: a call whose context ends during its wait is recorded once, as a rejection that
// matches the context's error, and never as an admission.
func TestOB1_LimiterRecordsAWaitEndedByItsContext(t *testing.T) {
	l, clk, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second))
	require.True(t, l.TryAcquire())
	ctx, cancel := context.WithCancel(contracttest.MarkedContext())
	defer cancel()
	clk.AfterFunc(400*time.Millisecond, cancel) // ends the context during the wait

	call := ratelimit.DecorateFunc(l, okCall)
	_, callErr := call(ctx, 1)
	require.ErrorIs(t, callErr, ratelimit.ErrExceeded)
	require.ErrorIs(t, callErr, context.Canceled)

	contracttest.RequireOutcomes(t, rec, admitted0, observe.Outcome{Result: observe.ResultRejected, Err: context.Canceled})
	assert.ErrorIs(t, rec.Outcomes()[1].Err, ratelimit.ErrExceeded)
	assert.Equal(t, []any{nil, "marker"}, contracttest.Markers(rec.Contexts()), "TryAcquire has no context of its own")
	assert.Equal(t, []policy.EventKind{ratelimit.EventWaited, ratelimit.EventRejected},
		kinds(rec.Events()))
	assert.Equal(t, []any{"marker", "marker"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: a call whose context is nil or over when it arrives is recorded as a rejection
// matching the context's error (a nil context as context.Background()), and publishes
// nothing; so is one whose deadline comes before its permit, which does publish.
func TestOB1_LimiterRecordsRefusalsForTheContext(t *testing.T) {
	for _, tc := range ctxtest.OverContexts() {
		t.Run(tc.Name, func(t *testing.T) {
			l, _, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second))
			_, err := ratelimit.DecorateFunc(l, okCall)(tc.Ctx, 1)
			require.ErrorIs(t, err, tc.Want)
			f := ratelimit.DecorateAsyncFunc(l, okAsync)(tc.Ctx, 1)
			_, _, asyncErr := f.Result()
			require.ErrorIs(t, asyncErr, tc.Want)

			want := observe.Outcome{Result: observe.ResultRejected, Err: tc.Want}
			contracttest.RequireOutcomes(t, rec, want, want)
			for _, c := range rec.Contexts() {
				require.NotNil(t, c, "a nil context is recorded as context.Background()")
			}
			assert.Empty(t, rec.Events())
			assert.Equal(t, 1, l.Snapshot().AvailablePermits, "nothing taken")
		})
	}

	l, _, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(3*time.Hour),
		ratelimit.MaxWait(5*time.Hour))
	require.True(t, l.TryAcquire())
	ctx, cancel := context.WithTimeout(contracttest.MarkedContext(), time.Hour) // before the permit, in 3h
	defer cancel()
	require.ErrorIs(t, l.Acquire(ctx), context.DeadlineExceeded)
	contracttest.RequireOutcomes(t, rec, admitted0, observe.Outcome{Result: observe.ResultRejected, Err: context.DeadlineExceeded})
	assert.Equal(t, "marker", contracttest.MarkOf(rec.Contexts()[1]))
	assert.Equal(t, "marker", contracttest.MarkOf(rec.EventContexts()[0]))
}

// OB-1: an asynchronous call is recorded when it starts (Wait = the wait it reserved) or
// is refused, once, with its context: at once, after its wait, or when its context ends
// first. A call whose future is canceled before its turn records nothing.
func TestOB1_LimiterAsyncRecordsAdmittedAndRejected(t *testing.T) {
	l, clk, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second))
	call := ratelimit.DecorateAsyncFunc(l, okAsync)
	ctx := contracttest.MarkedContext()

	first := call(ctx, 1) // starts at once
	second := call(ctx, 2)
	third := call(ctx, 3) // would wait 2s: refused
	contracttest.RequireOutcomes(t, rec, admitted0, rejected)
	assert.False(t, isDone(second), "waits for its permit")
	_, _, err := third.Result()
	require.ErrorIs(t, err, ratelimit.ErrExceeded)

	clk.Advance(time.Second)
	v, err := second.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	contracttest.RequireOutcomes(t, rec, admitted0, rejected, admittedAfter(time.Second))

	cctx, cancel := context.WithCancel(ctx)
	ended := call(cctx, 4) // waits 1s
	require.False(t, isDone(ended))
	cancel()
	_, err = ended.Await(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.Canceled)
	canceled := call(ctx, 5) // waits 1s, in the slot the ended call gave back
	require.False(t, isDone(canceled))
	require.True(t, canceled.Cancel(), "canceled before its turn")

	contracttest.RequireOutcomes(t, rec, admitted0, rejected, admittedAfter(time.Second),
		observe.Outcome{Result: observe.ResultRejected, Err: context.Canceled})
	assert.Equal(t, []any{"marker", "marker", "marker", "marker"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.EventKind{ratelimit.EventWaited, ratelimit.EventRejected,
		ratelimit.EventWaited, ratelimit.EventRejected, ratelimit.EventWaited}, kinds(rec.Events()))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker", "marker"}, contracttest.Markers(rec.EventContexts()))
	_, err = first.Await(context.Background())
	require.NoError(t, err)
	assert.Zero(t, clk.PendingTasks())
}

// OB-1: the methods called by hand record every decision with context.Background();
// a *BurstError is a rejection, n < 1 no decision, and Cancel records nothing.
func TestOB1_LimiterDirectCallsRecord(t *testing.T) {
	l, _, rec := observedLimiter(t, ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second))

	require.True(t, l.TryAcquire())
	require.NoError(t, l.TryAcquireN(1))
	require.False(t, l.TryAcquire())
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, r.Delay())
	r.Cancel()
	_, err = l.ReserveN(3)
	require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
	require.Error(t, l.TryAcquireN(0))
	require.ErrorIs(t, l.AcquireN(contracttest.MarkedContext(), 5), ratelimit.ErrExceedsBurst)

	contracttest.RequireOutcomes(t, rec, admitted0, admitted0, rejected, admittedAfter(500*time.Millisecond),
		observe.Outcome{Result: observe.ResultRejected, Err: ratelimit.ErrExceedsBurst},
		observe.Outcome{Result: observe.ResultRejected, Err: ratelimit.ErrExceedsBurst})
	assert.Equal(t, []any{nil, nil, nil, nil, nil, "marker"}, contracttest.Markers(rec.Contexts()))
	rej, ok := errors.AsType[policy.Rejection](rec.Outcomes()[4].Err)
	require.True(t, ok)
	assert.Equal(t, ratelimit.Layer, rej.RejectedBy())
}

// OB-1: a Keyed limiter's outcomes carry the key, as its events name it, and its calls'
// contexts; Decide records with context.Background(), DecideContext with its ctx.
func TestOB1_KeyedRecordsTheKey(t *testing.T) {
	k, clk, rec := observedKeyed(t, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second), keyed.Bounds(0, 8))
	ctx := contracttest.MarkedContext()

	require.NoError(t, k.Acquire(ctx, "a", 1))
	require.NoError(t, k.Acquire(ctx, "a", 1)) // waits 1s
	assert.Equal(t, time.Second, clk.Now())
	require.True(t, k.Decide(context.Background(), "b").Admitted)
	require.False(t, k.Decide(ctx, "b").Admitted)
	require.False(t, k.TryAcquire("b", 1) == nil)
	_, err := k.Reserve("c", 1)
	require.NoError(t, err)
	long := strings.Repeat("x", 9)
	require.NoError(t, k.Acquire(ctx, long, 1))
	require.ErrorIs(t, k.Acquire(ctx, "d", 2), ratelimit.ErrExceedsBurst)
	over := ctxtest.Canceled()
	require.ErrorIs(t, k.Acquire(over.Ctx, "e", 1), context.Canceled)

	got := rec.Outcomes()
	require.Len(t, got, 9)
	digest := got[6].Key
	assert.True(t, strings.HasPrefix(digest, "~sha256:"), "a long key is named by its digest: %q", digest)
	contracttest.RequireOutcomes(t, rec,
		observe.Outcome{Result: observe.ResultAdmitted, Key: "a"},
		observe.Outcome{Result: observe.ResultAdmitted, Key: "a", Wait: time.Second},
		observe.Outcome{Result: observe.ResultAdmitted, Key: "b"},
		observe.Outcome{Result: observe.ResultRejected, Key: "b", Err: ratelimit.ErrExceeded},
		observe.Outcome{Result: observe.ResultRejected, Key: "b", Err: ratelimit.ErrExceeded},
		observe.Outcome{Result: observe.ResultAdmitted, Key: "c"},
		observe.Outcome{Result: observe.ResultAdmitted, Key: digest},
		observe.Outcome{Result: observe.ResultRejected, Key: "d", Err: ratelimit.ErrExceedsBurst},
		observe.Outcome{Result: observe.ResultRejected, Key: "e", Err: context.Canceled})
	assert.Equal(t, []any{"marker", "marker", nil, "marker", nil, nil, "marker", "marker", nil},
		contracttest.Markers(rec.Contexts()))

	evs := rec.Events()
	require.Equal(t, []policy.EventKind{ratelimit.EventWaited, ratelimit.EventRejected,
		ratelimit.EventRejected, ratelimit.EventRejected}, kinds(evs))
	assert.Equal(t, []string{"a", "b", "b", "d"}, []string{evs[0].Key, evs[1].Key, evs[2].Key, evs[3].Key},
		"a burst refusal names its key too")
	assert.Equal(t, []any{"marker", "marker", nil, "marker"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: a disabled limiter records nothing, and neither does an instance whose observer
// gives it no recorder.
func TestOB1_UnrecordedInstancesRecordNothing(t *testing.T) {
	l, _, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	k, _, krec := observedKeyed(t, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	for range 3 {
		_, err := ratelimit.DecorateFunc(l, okCall)(contracttest.MarkedContext(), 1)
		require.NoError(t, err)
		require.True(t, l.TryAcquire())
		require.True(t, k.Decide(context.Background(), "a").Admitted)
	}
	assert.Empty(t, rec.Outcomes())
	assert.Empty(t, rec.Events())
	assert.Empty(t, krec.Outcomes())

	none := &contracttest.NilObserver{}
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Observe(none),
		ratelimit.WithClock(clock.NewManual()))
	require.NoError(t, err)
	assert.Equal(t, 1, none.Asked())
	require.True(t, l.TryAcquire())
	require.False(t, l.TryAcquire())
	_, err = ratelimit.DecorateFunc(l, okCall)(contracttest.MarkedContext(), 1)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
}

// OB-1: with a Backend, the decisions the store makes are recorded as the in-process
// ones are; the events the store publishes reach the recorder with context.Background(),
// and a key's failed binding with the context of the call that bound it.
func TestOB1_BackendDecisionsAndEventsAreRecorded(t *testing.T) {
	st := &relayStore{grant: backend.Grant{Verdict: backend.Admitted}}
	l, _, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.WithBackend(st))
	ctx := contracttest.MarkedContext()
	require.NoError(t, l.Acquire(ctx))
	st.set(backend.Grant{Verdict: backend.Refused, Wait: time.Second})
	require.ErrorIs(t, l.Acquire(ctx), ratelimit.ErrExceeded)
	require.False(t, l.TryAcquire())
	_, err := ratelimit.DecorateAsyncFunc(l, okAsync)(ctx, 1).Await(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	contracttest.RequireOutcomes(t, rec, admitted0, rejected, rejected, rejected)
	assert.Equal(t, []any{"marker", "marker", nil, "marker"}, contracttest.Markers(rec.Contexts()))

	st.binding().Listener(policy.Event{Kind: backend.EventFailed, Instance: "rl"})
	evs := rec.Events()
	require.Equal(t, backend.EventFailed, evs[len(evs)-1].Kind)
	assert.Nil(t, contracttest.MarkOf(rec.EventContexts()[len(evs)-1]), "no call caused it")

	k, _, krec := observedKeyed(t, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.WithBackend(failingBackend{}))
	require.NoError(t, k.Acquire(ctx, "a", 1), "a key whose binding failed keeps its state in-process")
	kevs := krec.Events()
	require.Equal(t, []policy.EventKind{backend.EventFailed}, kinds(kevs))
	assert.Equal(t, "a", kevs[0].Key)
	assert.Equal(t, []any{"marker"}, contracttest.Markers(krec.EventContexts()))
	contracttest.RequireOutcomes(t, krec, observe.Outcome{Result: observe.ResultAdmitted, Key: "a"})
}

// OB-1, rule 2: with a recorder, admitted and rejected calls still allocate nothing.
func TestOB1_RecordingAllocatesNothing(t *testing.T) {
	ctx := contracttest.MarkedContext()
	opts := []ratelimit.Option{ratelimit.Observe(contracttest.NopObserver{})}
	admitting, err := ratelimit.New(append(opts, ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))...)
	require.NoError(t, err)
	rejecting, err := ratelimit.New(append(opts, ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.MaxWait(time.Minute))...)
	require.NoError(t, err)
	rejecting.TryAcquire()
	keyed, err := keyed.New[string](keyed.Observe(contracttest.NopObserver{}), ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.NoError(t, err)
	_ = keyed.TryAcquire("k", 1)
	admit := ratelimit.DecorateFunc(admitting, okCall)
	reject := ratelimit.DecorateFunc(rejecting, okCall)
	for name, f := range map[string]func(){
		"decorated admitted":  func() { _, _ = admit(ctx, 1) },
		"decorated rejected":  func() { _, _ = reject(ctx, 1) },
		"TryAcquire admitted": func() { admitting.TryAcquire() },
		"TryAcquire rejected": func() { rejecting.TryAcquire() },
		"Reserve admitted":    func() { _, _ = admitting.Reserve() },
		"Reserve rejected":    func() { _, _ = rejecting.Reserve() },
		"Keyed rejected":      func() { _ = keyed.Acquire(ctx, "k", 1) },
		"Keyed Decide":        func() { _ = keyed.Decide(ctx, "k") },
	} {
		assert.Zero(t, testing.AllocsPerRun(1000, f), name)
	}
}

// Decorated calls with a recorder that does nothing: the cost of recording.
func BenchmarkOB1_DecoratedAdmittedRecorded(b *testing.B) {
	l, err := ratelimit.New(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second),
		ratelimit.Observe(contracttest.NopObserver{}))
	require.NoError(b, err)
	call := ratelimit.DecorateFunc(l, okCall)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 1)
	}
}

func BenchmarkOB1_DecoratedRejectedRecorded(b *testing.B) {
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.Observe(contracttest.NopObserver{}))
	require.NoError(b, err)
	l.TryAcquire()
	call := ratelimit.DecorateFunc(l, okCall)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 1)
	}
}

func BenchmarkOB1_KeyedDecideRecorded(b *testing.B) {
	k, err := keyed.New[string](ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second),
		keyed.Observe(contracttest.NopObserver{}))
	require.NoError(b, err)
	ctx := context.Background()
	k.Decide(ctx, "client")
	b.ReportAllocs()
	for b.Loop() {
		k.Decide(ctx, "client")
	}
}

// relayStore answers every Reserve with its grant, and keeps the Binding it was bound
// with.
type relayStore struct {
	mu    sync.Mutex
	grant backend.Grant
	bound backend.Binding
}

func (s *relayStore) Bind(b backend.Binding) (backend.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound = b
	return s, nil
}
func (*relayStore) LocalShare() int { return 1 }

func (s *relayStore) Reserve(context.Context, backend.Request) (backend.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grant, nil
}
func (s *relayStore) Cancel(context.Context, backend.Grant)                  {}
func (s *relayStore) Available(context.Context, backend.Request) (int, bool) { return 0, false }

func (s *relayStore) set(g backend.Grant) { s.mu.Lock(); s.grant = g; s.mu.Unlock() }

func (s *relayStore) binding() backend.Binding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

// failingBackend refuses to bind any limiter.
type failingBackend struct{}

func (failingBackend) Bind(backend.Binding) (backend.Store, error) {
	return nil, errors.New("no store")
}
func (failingBackend) LocalShare() int { return 1 }

func kinds(evs []policy.Event) []policy.EventKind {
	var out []policy.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

func isDone[T any](f *async.Future[T]) bool {
	_, ok, _ := f.Result()
	return ok
}
