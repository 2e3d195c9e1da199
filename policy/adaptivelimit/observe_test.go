package adaptivelimit_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/kindtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// The outcome recording of adaptive limiters (OB-1): each admission decision is recorded
// once, with the call's context, and every event reaches the recorder with it.

// observed returns a limiter with the id "al" on a manual clock, and the recorder its
// observer made for it.
func observed(t *testing.T, opts ...adaptivelimit.Option) (*adaptivelimit.Limiter, *clock.Manual, *kindtest.Observed) {
	t.Helper()
	clk := clock.NewManual()
	obs := &kindtest.Observer{}
	opts = append([]adaptivelimit.Option{adaptivelimit.WithClock(clk), adaptivelimit.WithInstanceID("al"),
		adaptivelimit.Observe(obs)}, opts...)
	l, err := adaptivelimit.New(opts...)
	require.NoError(t, err)
	require.Equal(t, []kindtest.ObservedKey{{Layer: adaptivelimit.Layer, ID: "al"}}, obs.Order,
		"the observer is asked once, for the instance's layer and id")
	return l, clk, obs.Of(adaptivelimit.Layer, "al")
}

var (
	admitted0 = policy.Outcome{Result: policy.ResultAdmitted}
	exceeded  = policy.Outcome{Result: policy.ResultRejected, Err: adaptivelimit.ErrLimitExceeded}
)

func admittedAfter(d time.Duration) policy.Outcome {
	return policy.Outcome{Result: policy.ResultAdmitted, Wait: d}
}

func rejectedFor(err error) policy.Outcome {
	return policy.Outcome{Result: policy.ResultRejected, Err: err}
}

func okCall(context.Context, int) (string, error) { return "ok", nil }

// OB-1: a decorated synchronous call records ResultAdmitted (Wait 0) or ResultRejected
// once, with its context; its rejection event reaches the recorder with that context.
func TestOB1_AdaptiveLimitRecordsAdmittedAndRejected(t *testing.T) {
	l, _, rec := observed(t, fixed(1)...)
	var call policy.Func[int, string]
	call = adaptivelimit.DecorateFunc(l, func(ctx context.Context, depth int) (string, error) {
		if depth == 0 {
			_, err := call(ctx, 1) // the only room is taken
			require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
		}
		return "ok", nil
	})
	_, err := call(kindtest.MarkedContext(), 0)
	require.NoError(t, err)

	kindtest.RequireOutcomes(t, rec, admitted0, exceeded)
	assert.Same(t, l.Rejection(), rec.Outcomes()[1].Err)
	assert.Equal(t, []any{"marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.Event{{Kind: adaptivelimit.EventRejected, Instance: "al", At: 0, Err: l.Rejection()}},
		rec.Events())
	assert.Equal(t, []any{"marker"}, kindtest.Markers(rec.EventContexts()))
	layer, ok := policy.RejectedBy(rec.Outcomes()[1].Err)
	assert.True(t, ok)
	assert.Equal(t, adaptivelimit.Layer, layer)
}

// OB-1: a synchronous call that waits is recorded once its wait is over: admitted with
// how long it waited, or rejected when MaxWait passes or its context ends. Its events
// carry its context.
func TestOB1_AdaptiveLimitRecordsSyncWaits(t *testing.T) {
	l, clk, rec := observed(t, append(fixed(1), adaptivelimit.MaxWait(time.Second))...)
	call := adaptivelimit.DecorateFunc(l, okCall)
	ctx := kindtest.MarkedContext()
	p, err := l.Acquire(ctx)
	require.NoError(t, err)

	wait := func(ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() { _, err := call(ctx, 1); done <- err }()
		kindtest.Eventually(t, func() bool { return l.Queued() == 1 }, "waiter queued")
		return done
	}

	done := wait(ctx) // let in after 300ms
	clk.Advance(300 * time.Millisecond)
	p.Release()
	require.NoError(t, <-done)

	p, err = l.Acquire(ctx)
	require.NoError(t, err)
	done = wait(ctx) // MaxWait passes
	clk.Advance(time.Second)
	require.ErrorIs(t, <-done, adaptivelimit.ErrLimitExceeded)

	cctx, cancel := context.WithCancel(ctx)
	done = wait(cctx) // its context ends
	clk.Advance(100 * time.Millisecond)
	cancel()
	err = <-done
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	require.ErrorIs(t, err, context.Canceled)
	p.Release()

	kindtest.RequireOutcomes(t, rec, admitted0, admittedAfter(300*time.Millisecond), admitted0, exceeded,
		rejectedFor(context.Canceled))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.Event{
		{Kind: adaptivelimit.EventWaited, Instance: "al", At: 300 * time.Millisecond, Wait: 300 * time.Millisecond},
		{Kind: adaptivelimit.EventRejected, Instance: "al", At: 1300 * time.Millisecond, Wait: time.Second,
			Err: l.Rejection()},
		{Kind: adaptivelimit.EventRejected, Instance: "al", At: 1400 * time.Millisecond,
			Wait: 100 * time.Millisecond, Err: rec.Outcomes()[4].Err},
	}, rec.Events())
	assert.Equal(t, []any{"marker", "marker", "marker"}, kindtest.Markers(rec.EventContexts()))
	assert.Zero(t, l.InFlight())
}

// OB-1: a call whose context is nil or over when it arrives is recorded as a rejection
// matching the context's error (a nil context as context.Background()), sync and async,
// and publishes nothing.
func TestOB1_AdaptiveLimitRecordsRefusalsOnArrival(t *testing.T) {
	for _, tc := range ctxtest.OverContexts() {
		t.Run(tc.Name, func(t *testing.T) {
			l, _, rec := observed(t, fixed(1)...)
			_, err := adaptivelimit.DecorateFunc(l, okCall)(tc.Ctx, 1)
			require.ErrorIs(t, err, tc.Want)
			_, err = adaptivelimit.DecorateAsyncFunc(l, kindtest.NewCalls().Next)(tc.Ctx, 1).Await(context.Background())
			require.ErrorIs(t, err, tc.Want)
			kindtest.RequireOutcomes(t, rec, rejectedFor(tc.Want), rejectedFor(tc.Want))
			assert.NotContains(t, kindtest.Markers(rec.Contexts()), "nil context")
			assert.Empty(t, rec.Events())
			assert.Zero(t, l.InFlight())
		})
	}
}

// OB-1: an asynchronous call is recorded once, with its context, when the limiter
// decides: at once, when it starts after waiting (with how long), when MaxWait passes or
// when its context ends; a call whose future is canceled while it waits records nothing.
func TestOB1_AdaptiveLimitAsyncRecordsAdmittedAndRejected(t *testing.T) {
	l, clk, rec := observed(t, append(fixed(1), adaptivelimit.MaxWait(time.Second))...)
	c := kindtest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	ctx := kindtest.MarkedContext()

	call(ctx, 1)             // starts at once
	second := call(ctx, 2)   // let in after 200ms
	expiring := call(ctx, 3) // MaxWait passes
	kindtest.RequireOutcomes(t, rec, admitted0)
	clk.Advance(200 * time.Millisecond)
	c.Finish(1)
	assert.Equal(t, []int{1, 2}, c.Started())
	kindtest.RequireOutcomes(t, rec, admitted0, admittedAfter(200*time.Millisecond))

	clk.Advance(800 * time.Millisecond)
	_, err := expiring.Await(context.Background())
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)

	cctx, cancel := context.WithCancel(ctx)
	ended := call(cctx, 4)
	canceled := call(ctx, 5)
	cancel()
	_, err = ended.Await(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, canceled.Cancel(), "removed from the queue")
	c.Finish(2)
	_, err = second.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, c.Started())

	kindtest.RequireOutcomes(t, rec, admitted0, admittedAfter(200*time.Millisecond), exceeded, rejectedFor(context.Canceled))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.EventKind{adaptivelimit.EventWaited, adaptivelimit.EventRejected,
		adaptivelimit.EventRejected}, kinds(rec.Events()))
	assert.Equal(t, []any{"marker", "marker", "marker"}, kindtest.Markers(rec.EventContexts()))
	assert.Zero(t, clk.PendingTasks())
	assert.Zero(t, l.InFlight())

	// MaxWait 0: refused at once.
	l0, _, rec0 := observed(t, fixed(1)...)
	call0 := adaptivelimit.DecorateAsyncFunc(l0, c.Next)
	call0(ctx, 6)
	_, err = call0(ctx, 7).Await(context.Background())
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	kindtest.RequireOutcomes(t, rec0, admitted0, exceeded)
	assert.Equal(t, []any{"marker", "marker"}, kindtest.Markers(rec0.Contexts()))
	assert.Equal(t, []any{"marker"}, kindtest.Markers(rec0.EventContexts()))
	c.Finish(6)
}

// OB-1: AdaptiveLimitChanged reaches the recorder with the context of the call whose
// sample changed the limit, sync or async; with context.Background() when the sample
// came through Permit.Record.
func TestOB1_AdaptiveLimitChangedCarriesTheCallsContext(t *testing.T) {
	l, _, rec := observed(t, aimd(8)...)
	ctx := kindtest.MarkedContext()
	_, err := adaptivelimit.DecorateFunc(l, func(context.Context, int) (string, error) {
		return "", context.DeadlineExceeded // a drop: AIMD halves the limit
	})(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 4, l.Limit())

	c := kindtest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	f := call(ctx, 2)
	c.FinishWith(2, context.DeadlineExceeded)
	_, err = f.Await(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 2, l.Limit())

	p, ok := l.TryAcquire()
	require.True(t, ok)
	p.Record(context.DeadlineExceeded)
	require.Equal(t, 1, l.Limit())

	evs := rec.Events()
	require.Equal(t, []policy.Event{
		{Kind: adaptivelimit.EventChanged, Instance: "al", Attrs: policy.EventAttrs{slog.Int(adaptivelimit.AttrLimit, 4), slog.Int(adaptivelimit.AttrPreviousLimit, 8)}},
		{Kind: adaptivelimit.EventChanged, Instance: "al", Attrs: policy.EventAttrs{slog.Int(adaptivelimit.AttrLimit, 2), slog.Int(adaptivelimit.AttrPreviousLimit, 4)}},
		{Kind: adaptivelimit.EventChanged, Instance: "al", Attrs: policy.EventAttrs{slog.Int(adaptivelimit.AttrLimit, 1), slog.Int(adaptivelimit.AttrPreviousLimit, 2)}},
	}, evs)
	assert.Equal(t, []any{"marker", "marker", nil}, kindtest.Markers(rec.EventContexts()))
	kindtest.RequireOutcomes(t, rec, admitted0, admitted0, admitted0)
	assert.Equal(t, []any{"marker", "marker", nil}, kindtest.Markers(rec.Contexts()),
		"TryAcquire records with context.Background()")
}

// hookClock is a manual clock that runs hook, once, when the next timer is armed: the
// moment between a call's look for room and its place in the queue.
type hookClock struct {
	*clock.Manual
	hook func()
}

func (c *hookClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if h := c.hook; h != nil {
		c.hook = nil
		h()
	}
	return c.Manual.AfterFunc(d, f)
}

// OB-1: an asynchronous call that finds room as it is being queued (room made meanwhile,
// with nobody waiting) starts at once and is recorded as admitted, Wait 0.
func TestOB1_AdaptiveLimitAsyncAdmittedAsItQueues(t *testing.T) {
	clk := &hookClock{Manual: clock.NewManual()}
	obs := &kindtest.Observer{}
	l, err := adaptivelimit.New(append(fixed(1), adaptivelimit.WithClock(clk), adaptivelimit.WithInstanceID("al"),
		adaptivelimit.Observe(obs), adaptivelimit.MaxWait(time.Second))...)
	require.NoError(t, err)
	rec := obs.Of(adaptivelimit.Layer, "al")
	p, ok := l.TryAcquire()
	require.True(t, ok)
	clk.hook = p.Release // the room comes back as the call arms its MaxWait timer
	c := kindtest.NewCalls()
	adaptivelimit.DecorateAsyncFunc(l, c.Next)(kindtest.MarkedContext(), 1)
	assert.Equal(t, []int{1}, c.Started())
	kindtest.RequireOutcomes(t, rec, admitted0, admitted0)
	assert.Equal(t, []any{nil, "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Empty(t, rec.Events(), "it did not wait")
	c.Finish(1)
	assert.Zero(t, clk.PendingTasks())
}

// OB-1: TryAcquire, which has no context, records with context.Background(); Acquire
// with its ctx.
func TestOB1_AdaptiveLimitDirectCallsRecord(t *testing.T) {
	l, _, rec := observed(t, fixed(1)...)
	p, ok := l.TryAcquire()
	require.True(t, ok)
	_, ok = l.TryAcquire()
	require.False(t, ok)
	_, err := l.Acquire(kindtest.MarkedContext())
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	p.Release()
	p, err = l.Acquire(kindtest.MarkedContext())
	require.NoError(t, err)
	p.Release()
	kindtest.RequireOutcomes(t, rec, admitted0, exceeded, exceeded, admitted0)
	assert.Equal(t, []any{nil, nil, "marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []any{nil, "marker"}, kindtest.Markers(rec.EventContexts()))
}

// OB-1: a disabled limiter records nothing, and neither does one whose observer gives it
// no recorder.
func TestOB1_AdaptiveLimitUnrecordedRecordsNothing(t *testing.T) {
	l, _, rec := observed(t, adaptivelimit.Enabled(false))
	_, err := adaptivelimit.DecorateFunc(l, okCall)(kindtest.MarkedContext(), 1)
	require.NoError(t, err)
	_, ok := l.TryAcquire()
	require.True(t, ok)
	assert.Empty(t, rec.Outcomes())

	none := &kindtest.NilObserver{}
	l, err = adaptivelimit.New(append(fixed(1), adaptivelimit.Observe(none))...)
	require.NoError(t, err)
	assert.Equal(t, 1, none.Asked())
	p, ok := l.TryAcquire()
	require.True(t, ok)
	_, ok = l.TryAcquire()
	require.False(t, ok)
	p.Release()
}

// OB-1, rule 2: with a recorder, admitted and rejected calls still allocate nothing.
func TestOB1_AdaptiveLimitRecordingAllocatesNothing(t *testing.T) {
	ctx := kindtest.MarkedContext()
	l, err := adaptivelimit.New(append(fixed(1), adaptivelimit.Observe(kindtest.NopObserver{}))...)
	require.NoError(t, err)
	call := adaptivelimit.DecorateFunc(l, okCall)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { p, _ := l.TryAcquire(); p.Release() }), "TryAcquire admitted")
	p, ok := l.TryAcquire()
	require.True(t, ok)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "rejected")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { l.TryAcquire() }), "TryAcquire rejected")
	p.Release()
}

// Decorated calls with a recorder that does nothing: the cost of recording.
func BenchmarkOB1_AdmittedRecorded(b *testing.B) {
	l, err := adaptivelimit.New(append(fixed(1), adaptivelimit.Observe(kindtest.NopObserver{}))...)
	require.NoError(b, err)
	call := adaptivelimit.DecorateFunc(l, okCall)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 1)
	}
}

func BenchmarkOB1_RejectedRecorded(b *testing.B) {
	l, err := adaptivelimit.New(append(fixed(1), adaptivelimit.Observe(kindtest.NopObserver{}))...)
	require.NoError(b, err)
	l.TryAcquire()
	call := adaptivelimit.DecorateFunc(l, okCall)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 1)
	}
}

func kinds(evs []policy.Event) []policy.EventKind {
	var out []policy.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}
