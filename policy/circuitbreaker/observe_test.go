package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// observed is a breaker on a manual clock, observed by a contracttest.Observer, with a
// decorated function that does what its step says (a sleep on the clock makes it slow).
type observed struct {
	clk  *clock.Manual
	b    *cb.Breaker
	rec  *contracttest.Observed
	call decorate.Func[step, string]
}

func newObserved(t *testing.T, opts ...cb.Option) *observed {
	t.Helper()
	o := &observed{clk: clock.NewManual()}
	obs := &contracttest.Observer{}
	b, err := cb.New(append([]cb.Option{cb.WithClock(o.clk), cb.Name("svc"), cb.Observe(obs)}, opts...)...)
	require.NoError(t, err)
	require.True(t, obs.Made(cb.Layer, "svc"), "the recorder is asked for when the breaker is built")
	o.b, o.rec = b, obs.Of(cb.Layer, "svc")
	o.call = cb.DecorateFunc(b, func(ctx context.Context, s step) (string, error) {
		if s.sleep > 0 {
			require.NoError(t, o.clk.Sleep(ctx, s.sleep))
		}
		return "done", s.err
	})
	return o
}

// OB-1: an admitted call is recorded once it ends, with its result as the breaker
// classifies it, its latency on the breaker's clock, whether it was slow, its error and
// the context it was given.
func TestOB1_BreakerRecordsSucceededFailedIgnoredWithLatencyAndSlow(t *testing.T) {
	o := newObserved(t, cb.SlowCallThreshold(100*time.Millisecond), cb.IgnoreOn(errIgnored),
		cb.SlidingWindowSize(10), cb.MinimumCalls(10))
	for i, s := range []step{slow(30*time.Millisecond, nil), slow(150*time.Millisecond, errBoom),
		slow(200*time.Millisecond, errIgnored), slow(100*time.Millisecond, nil), ok} {
		_, _ = o.call(contracttest.Marked(fmt.Sprint("call", i)), s)
	}
	require.Equal(t, cb.Closed, o.b.State())

	got := o.rec.Outcomes()
	require.Len(t, got, 5)
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Latency: 30 * time.Millisecond}, got[0])
	assert.Equal(t, observe.Outcome{Result: observe.ResultFailed, Latency: 150 * time.Millisecond, Slow: true, Err: errBoom}, got[1])
	assert.Equal(t, observe.Outcome{Result: observe.ResultIgnored, Latency: 200 * time.Millisecond, Slow: true, Err: errIgnored}, got[2])
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Latency: 100 * time.Millisecond}, got[3],
		"at the threshold is not slow")
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded}, got[4])
	for i, ctx := range o.rec.Contexts() {
		assert.Equal(t, fmt.Sprint("call", i), contracttest.MarkOf(ctx), "outcome %d has its call's context", i)
	}
	assert.Empty(t, o.rec.Events(), "admitted calls that change nothing publish nothing")
	snap := o.b.Snapshot()
	assert.Equal(t, 4, snap.BufferedCalls, "the breaker counts all but the ignored call")
	assert.Equal(t, 1, snap.SlowCalls)
}

// OB-1: a refused call is recorded as rejected, with the *openError; the rejection and
// the transitions a call makes reach the recorder with that call's context, those of
// TransitionTo with context.Background().
func TestOB1_BreakerRecordsRejectionsAndEventsWithTheCallsContext(t *testing.T) {
	o := newObserved(t, cb.SlidingWindowSize(1), cb.MinimumCalls(1), cb.WaitInOpen(time.Minute),
		cb.PermittedInHalfOpen(1))
	_, err := o.call(contracttest.Marked("opener"), fail)
	require.ErrorIs(t, err, errBoom)
	require.Equal(t, cb.Open, o.b.State())

	o.clk.Advance(10 * time.Second)
	_, err = o.call(contracttest.Marked("refused"), ok)
	require.ErrorIs(t, err, cb.ErrOpen)

	o.clk.Advance(time.Minute)
	_, err = o.call(contracttest.Marked("trial"), slow(time.Second, nil))
	require.NoError(t, err)
	require.Equal(t, cb.Closed, o.b.State())

	_ = o.b.TransitionTo(cb.ForcedOpen)
	_, err = o.call(contracttest.Marked("forced"), ok)
	require.ErrorIs(t, err, cb.ErrOpen)

	got := o.rec.Outcomes()
	require.Len(t, got, 4)
	assert.Equal(t, observe.Outcome{Result: observe.ResultFailed, Err: errBoom}, got[0])
	assert.Equal(t, observe.ResultRejected, got[1].Result)
	assert.ErrorIs(t, got[1].Err, cb.ErrOpen)
	var oe *cb.OpenError
	require.ErrorAs(t, got[1].Err, &oe)
	assert.Equal(t, cb.Open, oe.State())
	assert.Zero(t, got[1].Latency)
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Latency: time.Second}, got[2])
	assert.Equal(t, observe.ResultRejected, got[3].Result)
	require.ErrorAs(t, got[3].Err, &oe)
	assert.Equal(t, cb.ForcedOpen, oe.State())
	var marks []any
	for _, ctx := range o.rec.Contexts() {
		marks = append(marks, contracttest.MarkOf(ctx))
	}
	assert.Equal(t, []any{"opener", "refused", "trial", "forced"}, marks)

	type ev struct {
		kind     policy.EventKind
		from, to any // the states' names; nil for an event without them
		mark     any
	}
	var evs []ev
	ctxs := o.rec.EventContexts()
	for i, e := range o.rec.Events() {
		assert.Equal(t, "svc", e.Instance)
		evs = append(evs, ev{e.Kind, e.Attr("from").Any(), e.Attr("to").Any(), contracttest.MarkOf(ctxs[i])})
	}
	assert.Equal(t, []ev{
		{cb.EventTransition, "closed", "open", "opener"},
		{cb.EventRejected, nil, nil, "refused"},
		{cb.EventTransition, "open", "half-open", "trial"},
		{cb.EventTransition, "half-open", "closed", "trial"},
		{cb.EventTransition, "closed", "forced-open", nil},
		{cb.EventRejected, nil, nil, "forced"},
	}, evs)
	assert.Equal(t, 50*time.Second, o.rec.Events()[1].RetryAfter)
}

// OB-1: an asynchronous call is recorded when its future completes, its latency running
// from the call to the completion; a future canceled is recorded as ignored, as the
// breaker counts it; a refusal is recorded at once.
func TestOB1_BreakerRecordsAsyncOutcomes(t *testing.T) {
	clk := clock.NewManual()
	obs := &contracttest.Observer{}
	b, err := cb.New(cb.WithClock(clk), cb.Name("svc"), cb.Observe(obs), cb.SlidingWindowSize(3),
		cb.MinimumCalls(3), cb.SlowCallThreshold(time.Second))
	require.NoError(t, err)
	rec := obs.Of(cb.Layer, "svc")
	var complete []func(string, error)
	call := cb.DecorateAsyncFunc(b, func(context.Context, struct{}) *async.Future[string] {
		f, c := async.NewCancelablePromise[string](func() bool { return false })
		complete = append(complete, c)
		return f
	})

	fOK := call(contracttest.Marked("ok"), struct{}{})
	fFail := call(contracttest.Marked("fail"), struct{}{})
	fCanceled := call(contracttest.Marked("canceled"), struct{}{})
	assert.Empty(t, rec.Outcomes(), "nothing is recorded before the future completes")
	clk.Advance(300 * time.Millisecond)
	complete[0]("v", nil)
	clk.Advance(2 * time.Second)
	complete[1]("", errBoom)
	fCanceled.Cancel()

	got := rec.Outcomes()
	require.Len(t, got, 3)
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Latency: 300 * time.Millisecond}, got[0])
	assert.Equal(t, observe.Outcome{Result: observe.ResultFailed, Latency: 2300 * time.Millisecond, Slow: true, Err: errBoom}, got[1])
	assert.Equal(t, observe.ResultIgnored, got[2].Result)
	assert.ErrorIs(t, got[2].Err, async.ErrCanceled)
	assert.Equal(t, 2300*time.Millisecond, got[2].Latency)
	assert.True(t, got[2].Slow)
	var marks []any
	for _, ctx := range rec.Contexts() {
		marks = append(marks, contracttest.MarkOf(ctx))
	}
	assert.Equal(t, []any{"ok", "fail", "canceled"}, marks)
	_, err = fOK.Await(context.Background())
	require.NoError(t, err)
	_, err = fFail.Await(context.Background())
	require.ErrorIs(t, err, errBoom)

	_ = b.TransitionTo(cb.ForcedOpen)
	f := call(contracttest.Marked("refused"), struct{}{})
	_, err = f.Await(context.Background())
	require.ErrorIs(t, err, cb.ErrOpen)
	got = rec.Outcomes()
	require.Len(t, got, 4)
	assert.Equal(t, observe.ResultRejected, got[3].Result)
	assert.ErrorIs(t, got[3].Err, cb.ErrOpen)
	assert.Equal(t, "refused", contracttest.MarkOf(rec.Contexts()[3]))
	evs, ctxs := rec.Events(), rec.EventContexts()
	require.NotEmpty(t, evs)
	assert.Equal(t, cb.EventRejected, evs[len(evs)-1].Kind)
	assert.Equal(t, "refused", contracttest.MarkOf(ctxs[len(ctxs)-1]))
}

// OB-1: an outcome is recorded whatever state the breaker is in when the call ends, even
// when the breaker no longer counts it; a call that panics, and one whose RecordIf
// predicate panics, are recorded as failures.
func TestOB1_BreakerRecordsEveryAdmittedCallOnce(t *testing.T) {
	o := newObserved(t, cb.SlidingWindowSize(10), cb.MinimumCalls(10))
	inner := cb.DecorateFunc(o.b, func(ctx context.Context, _ int) (int, error) {
		_ = o.b.TransitionTo(cb.ForcedOpen) // the call ends in another state than the one that admitted it
		return 1, nil
	})
	_, err := inner(contracttest.Marked("late"), 0)
	require.NoError(t, err)
	o.b.Reset()

	panics := cb.DecorateFunc(o.b, func(context.Context, int) (int, error) { panic("boom") })
	require.Panics(t, func() { _, _ = panics(contracttest.Marked("panic"), 0) })

	got := o.rec.Outcomes()
	require.Len(t, got, 2)
	assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded}, got[0])
	assert.Equal(t, observe.Outcome{Result: observe.ResultFailed}, got[1], "a panic has no error")
	assert.Equal(t, "late", contracttest.MarkOf(o.rec.Contexts()[0]))
	assert.Equal(t, "panic", contracttest.MarkOf(o.rec.Contexts()[1]))
	assert.Equal(t, 1, o.b.Snapshot().FailedCalls, "the breaker counts the panic as a failure too")

	obs := &contracttest.Observer{}
	b3, err := cb.New(cb.WithClock(o.clk), cb.Name("svc3"), cb.Observe(obs),
		cb.RecordOn(errOther), cb.RecordIf(func(int, error) bool { panic("pred") }))
	require.NoError(t, err)
	call := cb.DecorateFunc(b3, func(context.Context, int) (int, error) { return 0, errBoom })
	require.Panics(t, func() { _, _ = call(contracttest.Marked("pred"), 0) })
	got = obs.Of(cb.Layer, "svc3").Outcomes()
	assert.Equal(t, []observe.Outcome{{Result: observe.ResultFailed, Err: errBoom}}, got)
}

// OB-1: a call refused on arrival because its context was nil or done never asks the
// breaker, which returns the context's error, not a rejection: nothing is recorded. Nor
// is a call through a disabled breaker.
func TestOB1_BreakerRecordsNothingForArrivalRefusalsOrWhenDisabled(t *testing.T) {
	o := newObserved(t)
	done, cancel := context.WithCancel(contracttest.Marked("done"))
	cancel()
	_, err := o.call(done, ok)
	require.ErrorIs(t, err, context.Canceled)
	var nilCtx context.Context
	_, err = o.call(nilCtx, ok)
	require.ErrorIs(t, err, policy.ErrNilContext)
	acall := cb.DecorateAsyncFunc(o.b, func(context.Context, struct{}) *async.Future[int] { return async.Completed(1) })
	_, err = acall(done, struct{}{}).Await(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, o.rec.Outcomes())
	assert.Empty(t, o.rec.Events())

	_ = o.b.TransitionTo(cb.Disabled)
	before := len(o.rec.Events()) // the transition to disabled
	_, err = o.call(contracttest.Marked("disabled"), fail)
	require.ErrorIs(t, err, errBoom)
	_, err = acall(contracttest.Marked("disabled"), struct{}{}).Await(context.Background())
	require.NoError(t, err)
	assert.Empty(t, o.rec.Outcomes())
	assert.Len(t, o.rec.Events(), before)
}

// OB-1: an instance whose observer makes no recorder records nothing, and still publishes
// to its listener.
func TestOB1_BreakerWithoutRecorderRecordsNothing(t *testing.T) {
	nilObs := &contracttest.NilObserver{}
	r := &recorder{}
	b, err := cb.New(cb.WithClock(clock.NewManual()), cb.Observe(nilObs), cb.OnEvent(r.listen),
		cb.SlidingWindowSize(1), cb.MinimumCalls(1))
	require.NoError(t, err)
	assert.Equal(t, 1, nilObs.Asked(), "asked once, when built")
	call := cb.DecorateFunc(b, failFunc)
	_, err = call(context.Background(), 0)
	require.ErrorIs(t, err, errBoom)
	_, err = call(context.Background(), 0)
	require.ErrorIs(t, err, cb.ErrOpen)
	assert.Equal(t, []string{"closed→open"}, r.transitions())
	assert.Equal(t, 1, r.count(cb.EventRejected))
	assert.Equal(t, 1, nilObs.Asked())
}

// OB-1: with a recorder attached, admitted and rejected calls still allocate nothing, on
// the manual clock and on the system clock.
func TestOB1_BreakerRecorderAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for name, clk := range map[string]clock.Clock{"manual": clock.NewManual(), "system": clock.System()} {
		t.Run(name, func(t *testing.T) {
			b := allocBreaker(t, clk, cb.Observe(contracttest.NopObserver{}), cb.IgnoreOn(errIgnored))
			okCall := cb.DecorateFunc(b, okFunc)
			failCall := cb.DecorateFunc(b, failFunc)
			ignored := cb.DecorateFunc(b, func(context.Context, int) (int, error) { return 0, errIgnored })
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "admitted success")
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ignored(ctx, 0) }), "admitted, ignored")
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = failCall(ctx, 0) }), "admitted failure, then rejected")
			require.Equal(t, cb.Open, b.State())
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "rejected while open")
			_ = b.TransitionTo(cb.ForcedOpen)
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }), "rejected while forced open")

			async1 := cb.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = async1(ctx, 0) }), "async, rejected while forced open")
		})
	}
}

// OB-1: OpenError names the circuit breaker as the layer that refused the call, for a
// breaker's rejection, a wrapped one, and ErrOpen itself.
func TestOB1_OpenErrorIsARejectionByTheCircuitBreaker(t *testing.T) {
	o := newObserved(t, cb.SlidingWindowSize(1), cb.MinimumCalls(1))
	_, _ = o.call(context.Background(), fail)
	_, err := o.call(context.Background(), ok)
	for _, e := range []error{err, fmt.Errorf("wrapped: %w", err), cb.ErrOpen} {
		rej, isRej := errors.AsType[policy.Rejection](e)
		require.True(t, isRej, "%v", e)
		assert.Equal(t, cb.Layer, rej.RejectedBy())
	}
	_, isRej := errors.AsType[policy.Rejection](errors.New("other"))
	assert.False(t, isRej)
}

// untimedObserver gives every instance a recorder that wants no latencies
// (see observe.Recorder).
type untimedObserver struct{}

func (untimedObserver) Instrument(policy.Layer, string) observe.Recorder { return untimedRecorder{} }

type untimedRecorder struct{ contracttest.NopRecorder }

func (untimedRecorder) Untimed() bool { return true }

// OB-1, CB-SLOW-OFF: the clock is read for an admitted call's start and end only when
// they are needed: a SlowCallThreshold, or a recorder that wants latencies. Without either
// (no recorder, or an Untimed one), a success recorded by the clean flag reads no clock,
// and another closed-state outcome reads it once at most, never twice (here, on a manual
// clock, once at its end; with the system clock only for a transition). An ignored call
// in the closed state reads its end only for a recorder that wants it.
func TestOB1_BreakerReadsTheClockForLatencyOnlyWhenRecording(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []cb.Option
		admitted  int // reads by a closed-state success, window not full
		clean     int // reads by a closed-state success, window full of successes
		ignored   int // reads by a closed-state call whose error is ignored
		wantLat   bool
		wantSlow  bool
		observing bool
	}{
		{name: "default", admitted: 1},
		{name: "untimed recorder", opts: []cb.Option{cb.Observe(untimedObserver{})}, admitted: 1},
		{name: "timed recorder", opts: []cb.Option{cb.Observe(contracttest.NopObserver{})},
			admitted: 2, clean: 2, ignored: 2},
		{name: "threshold", opts: []cb.Option{cb.SlowCallThreshold(time.Second)},
			admitted: 2, clean: 2, ignored: 1},
		{name: "threshold and untimed recorder", opts: []cb.Option{cb.SlowCallThreshold(time.Second),
			cb.Observe(untimedObserver{})}, admitted: 2, clean: 2, ignored: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := contracttest.NewCountingClock(clock.NewManual())
			b, err := cb.New(append([]cb.Option{cb.WithClock(clk), cb.IgnoreOn(errIgnored),
				cb.SlidingWindowSize(4), cb.MinimumCalls(4)}, tc.opts...)...)
			require.NoError(t, err)
			okCall := cb.DecorateFunc(b, okFunc)
			ignored := cb.DecorateFunc(b, func(context.Context, int) (int, error) { return 0, errIgnored })
			ctx := context.Background()

			clk.Reset()
			_, _ = okCall(ctx, 0)
			assert.Equal(t, tc.admitted, clk.Reads(), "a success, window not full")
			for range 3 {
				_, _ = okCall(ctx, 0)
			}
			require.Equal(t, 4, b.Snapshot().BufferedCalls)
			clk.Reset()
			_, _ = okCall(ctx, 0)
			assert.Equal(t, tc.clean, clk.Reads(), "a success, window full of successes")
			clk.Reset()
			_, _ = ignored(ctx, 0)
			assert.Equal(t, tc.ignored, clk.Reads(), "an ignored call in the closed state")
		})
	}
}

// OB-1, CB-SLOW-OFF: an Untimed recorder is told outcomes with Latency 0; Slow is still
// reported when a threshold is set (the breaker measures the call for itself).
func TestOB1_UntimedRecorderGetsNoLatency(t *testing.T) {
	for _, threshold := range []time.Duration{0, 100 * time.Millisecond} {
		t.Run(fmt.Sprint("threshold=", threshold), func(t *testing.T) {
			clk := clock.NewManual()
			rec := &untimedCapture{}
			b, err := cb.New(cb.WithClock(clk), cb.SlowCallThreshold(threshold),
				cb.Observe(observerOf{rec}))
			require.NoError(t, err)
			call := cb.DecorateFunc(b, func(ctx context.Context, _ int) (int, error) {
				return 0, clk.Sleep(ctx, 200*time.Millisecond)
			})
			_, err = call(context.Background(), 0)
			require.NoError(t, err)
			require.Len(t, rec.outcomes, 1)
			assert.Equal(t, observe.Outcome{Result: observe.ResultSucceeded, Slow: threshold > 0}, rec.outcomes[0])
			assert.Equal(t, map[bool]int{false: 0, true: 1}[threshold > 0], b.Snapshot().SlowCalls)
		})
	}
}

type observerOf struct{ rec observe.Recorder }

func (o observerOf) Instrument(policy.Layer, string) observe.Recorder { return o.rec }

// untimedCapture keeps the outcomes it is told; it wants no latencies. One goroutine.
type untimedCapture struct {
	contracttest.NopRecorder
	outcomes []observe.Outcome
}

func (*untimedCapture) Untimed() bool { return true }

func (u *untimedCapture) Record(_ context.Context, o observe.Outcome) {
	u.outcomes = append(u.outcomes, o)
}

// BenchmarkAdmittedObserved is BenchmarkAdmitted with a recorder that does nothing: the
// cost of building and handing over each outcome.
func BenchmarkAdmittedObserved(b *testing.B) {
	br := allocBreaker(b, clock.System(), cb.Observe(contracttest.NopObserver{}))
	call := cb.DecorateFunc(br, okFunc)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 0)
	}
}

// BenchmarkRejectedObserved is BenchmarkRejected with a recorder that does nothing.
func BenchmarkRejectedObserved(b *testing.B) {
	br := allocBreaker(b, clock.System(), cb.SlidingWindowSize(1), cb.Observe(contracttest.NopObserver{}))
	_, _ = cb.DecorateFunc(br, failFunc)(context.Background(), 0)
	if br.State() != cb.Open {
		b.Fatal("breaker not open")
	}
	call := cb.DecorateFunc(br, okFunc)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 0)
	}
}
