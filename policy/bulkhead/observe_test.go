package bulkhead_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/kindtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// The outcome recording of bulkheads (OB-1): each admission decision is recorded once,
// with the call's context, and every event reaches the recorder with it.

// observed returns a bulkhead with the id "bh" on a manual clock, and the recorder its
// observer made for it.
func observed(t *testing.T, opts ...bulkhead.Option) (*bulkhead.Bulkhead, *clock.Manual, *kindtest.Observed) {
	t.Helper()
	clk := clock.NewManual()
	obs := &kindtest.Observer{}
	opts = append([]bulkhead.Option{bulkhead.WithClock(clk), bulkhead.WithInstanceID("bh"),
		bulkhead.Observe(obs)}, opts...)
	b, err := bulkhead.New(opts...)
	require.NoError(t, err)
	require.Equal(t, []kindtest.ObservedKey{{Layer: bulkhead.Layer, ID: "bh"}}, obs.Order,
		"the observer is asked once, for the instance's layer and id")
	return b, clk, obs.Of(bulkhead.Layer, "bh")
}

var (
	admitted0 = policy.Outcome{Result: policy.ResultAdmitted}
	full      = policy.Outcome{Result: policy.ResultRejected, Err: bulkhead.ErrFull}
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
func TestOB1_BulkheadRecordsAdmittedAndRejected(t *testing.T) {
	b, _, rec := observed(t, bulkhead.MaxConcurrent(1))
	var call policy.Func[int, string]
	call = bulkhead.DecorateFunc(b, func(ctx context.Context, depth int) (string, error) {
		if depth == 0 {
			_, err := call(ctx, 1) // the only slot is taken
			require.ErrorIs(t, err, bulkhead.ErrFull)
		}
		return "ok", nil
	})
	_, err := call(kindtest.MarkedContext(), 0)
	require.NoError(t, err)

	kindtest.RequireOutcomes(t, rec, admitted0, full)
	assert.Same(t, b.Rejection(), rec.Outcomes()[1].Err)
	assert.Equal(t, []any{"marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.Event{{Kind: bulkhead.EventRejected, Instance: "bh", At: 0, Err: b.Rejection()}},
		rec.Events())
	assert.Equal(t, []any{"marker"}, kindtest.Markers(rec.EventContexts()))
	layer, ok := policy.RejectedBy(rec.Outcomes()[1].Err)
	assert.True(t, ok)
	assert.Equal(t, bulkhead.Layer, layer)
}

// OB-1: a synchronous call that waits is recorded once its wait is over: admitted with
// how long it waited, or rejected when MaxWait passes or its context ends. Its events
// carry its context.
func TestOB1_BulkheadRecordsSyncWaits(t *testing.T) {
	b, clk, rec := observed(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	call := bulkhead.DecorateFunc(b, okCall)
	ctx := kindtest.MarkedContext()
	require.NoError(t, b.Acquire(ctx))

	wait := func(ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() { _, err := call(ctx, 1); done <- err }()
		kindtest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")
		return done
	}

	done := wait(ctx) // let in after 300ms
	clk.Advance(300 * time.Millisecond)
	b.Release()
	require.NoError(t, <-done)

	require.NoError(t, b.Acquire(ctx))
	done = wait(ctx) // MaxWait passes
	clk.Advance(time.Second)
	require.ErrorIs(t, <-done, bulkhead.ErrFull)

	cctx, cancel := context.WithCancel(ctx)
	done = wait(cctx) // its context ends
	clk.Advance(100 * time.Millisecond)
	cancel()
	err := <-done
	require.ErrorIs(t, err, bulkhead.ErrFull)
	require.ErrorIs(t, err, context.Canceled)
	b.Release()

	kindtest.RequireOutcomes(t, rec, admitted0, admittedAfter(300*time.Millisecond), admitted0, full,
		rejectedFor(context.Canceled))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.Event{
		{Kind: bulkhead.EventWaited, Instance: "bh", At: 300 * time.Millisecond, Wait: 300 * time.Millisecond},
		{Kind: bulkhead.EventRejected, Instance: "bh", At: 1300 * time.Millisecond, Wait: time.Second, Err: b.Rejection()},
		{Kind: bulkhead.EventRejected, Instance: "bh", At: 1400 * time.Millisecond, Wait: 100 * time.Millisecond,
			Err: rec.Outcomes()[4].Err},
	}, rec.Events())
	assert.Equal(t, []any{"marker", "marker", "marker"}, kindtest.Markers(rec.EventContexts()))
	assert.Equal(t, 1, b.AvailableSlots())
}

// OB-1: a call whose context is nil or over when it arrives is recorded as a rejection
// matching the context's error (a nil context as context.Background()), sync and async,
// and publishes nothing.
func TestOB1_BulkheadRecordsRefusalsOnArrival(t *testing.T) {
	for _, tc := range ctxtest.OverContexts() {
		t.Run(tc.Name, func(t *testing.T) {
			b, _, rec := observed(t, bulkhead.MaxConcurrent(1))
			_, err := bulkhead.DecorateFunc(b, okCall)(tc.Ctx, 1)
			require.ErrorIs(t, err, tc.Want)
			_, err = bulkhead.DecorateAsyncFunc(b, kindtest.NewCalls().Next)(tc.Ctx, 1).Await(context.Background())
			require.ErrorIs(t, err, tc.Want)
			kindtest.RequireOutcomes(t, rec, rejectedFor(tc.Want), rejectedFor(tc.Want))
			assert.NotContains(t, kindtest.Markers(rec.Contexts()), "nil context")
			assert.Empty(t, rec.Events())
			assert.Equal(t, 1, b.AvailableSlots())
		})
	}
}

// OB-1: an asynchronous call is recorded once, with its context, when the bulkhead
// decides: at once, when it starts after waiting (with how long), when MaxWait passes or
// when its context ends; a call whose future is canceled while it waits records nothing.
func TestOB1_BulkheadAsyncRecordsAdmittedAndRejected(t *testing.T) {
	b, clk, rec := observed(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := kindtest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
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
	require.ErrorIs(t, err, bulkhead.ErrFull)

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

	kindtest.RequireOutcomes(t, rec, admitted0, admittedAfter(200*time.Millisecond), full, rejectedFor(context.Canceled))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.EventKind{bulkhead.EventWaited, bulkhead.EventRejected, bulkhead.EventRejected},
		kinds(rec.Events()))
	assert.Equal(t, []any{"marker", "marker", "marker"}, kindtest.Markers(rec.EventContexts()))
	assert.Zero(t, clk.PendingTasks())
	assert.Equal(t, 1, b.AvailableSlots())

	// MaxWait 0: refused at once.
	b0, _, rec0 := observed(t, bulkhead.MaxConcurrent(1))
	call0 := bulkhead.DecorateAsyncFunc(b0, c.Next)
	call0(ctx, 6)
	_, err = call0(ctx, 7).Await(context.Background())
	require.ErrorIs(t, err, bulkhead.ErrFull)
	kindtest.RequireOutcomes(t, rec0, admitted0, full)
	assert.Equal(t, []any{"marker", "marker"}, kindtest.Markers(rec0.Contexts()))
	assert.Equal(t, []any{"marker"}, kindtest.Markers(rec0.EventContexts()))
	c.Finish(6)
}

// hookClock is a manual clock that runs hook, once, when the next timer is armed: the
// moment between a call's look for a free slot and its place in the queue.
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

// OB-1: an asynchronous call that finds a slot free as it is being queued (one released
// meanwhile, with nobody waiting) starts at once and is recorded as admitted, Wait 0.
func TestOB1_BulkheadAsyncAdmittedAsItQueues(t *testing.T) {
	clk := &hookClock{Manual: clock.NewManual()}
	obs := &kindtest.Observer{}
	b, err := bulkhead.New(bulkhead.WithClock(clk), bulkhead.WithInstanceID("bh"), bulkhead.Observe(obs),
		bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	require.NoError(t, err)
	rec := obs.Of(bulkhead.Layer, "bh")
	require.True(t, b.TryAcquire())
	clk.hook = b.Release // the slot comes back as the call arms its MaxWait timer
	c := kindtest.NewCalls()
	bulkhead.DecorateAsyncFunc(b, c.Next)(kindtest.MarkedContext(), 1)
	assert.Equal(t, []int{1}, c.Started())
	kindtest.RequireOutcomes(t, rec, admitted0, admitted0)
	assert.Equal(t, []any{nil, "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Empty(t, rec.Events(), "it did not wait")
	c.Finish(1)
	assert.Zero(t, clk.PendingTasks())
}

// OB-1: TryAcquire, which has no context, records with context.Background(); Acquire
// with its ctx.
func TestOB1_BulkheadDirectCallsRecord(t *testing.T) {
	b, _, rec := observed(t, bulkhead.MaxConcurrent(1))
	require.True(t, b.TryAcquire())
	require.False(t, b.TryAcquire())
	require.ErrorIs(t, b.Acquire(kindtest.MarkedContext()), bulkhead.ErrFull)
	b.Release()
	require.NoError(t, b.Acquire(kindtest.MarkedContext()))
	b.Release()
	kindtest.RequireOutcomes(t, rec, admitted0, full, full, admitted0)
	assert.Equal(t, []any{nil, nil, "marker", "marker"}, kindtest.Markers(rec.Contexts()))
	assert.Equal(t, []any{nil, "marker"}, kindtest.Markers(rec.EventContexts()))
}

// OB-1: a disabled bulkhead records nothing, and neither does one whose observer gives it
// no recorder.
func TestOB1_BulkheadUnrecordedRecordsNothing(t *testing.T) {
	b, _, rec := observed(t, bulkhead.Enabled(false))
	_, err := bulkhead.DecorateFunc(b, okCall)(kindtest.MarkedContext(), 1)
	require.NoError(t, err)
	require.True(t, b.TryAcquire())
	assert.Empty(t, rec.Outcomes())

	none := &kindtest.NilObserver{}
	b, err = bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.Observe(none))
	require.NoError(t, err)
	assert.Equal(t, 1, none.Asked())
	require.True(t, b.TryAcquire())
	require.False(t, b.TryAcquire())
}

// OB-1, rule 2: with a recorder, admitted and rejected calls still allocate nothing.
func TestOB1_BulkheadRecordingAllocatesNothing(t *testing.T) {
	ctx := kindtest.MarkedContext()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.Observe(kindtest.NopObserver{}))
	require.NoError(t, err)
	call := bulkhead.DecorateFunc(b, okCall)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { b.TryAcquire(); b.Release() }), "TryAcquire admitted")
	require.True(t, b.TryAcquire())
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "rejected")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { b.TryAcquire() }), "TryAcquire rejected")
	b.Release()
}

// Decorated calls with a recorder that does nothing: the cost of recording.
func BenchmarkOB1_SyncAdmittedRecorded(b *testing.B) {
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.Observe(kindtest.NopObserver{}))
	require.NoError(b, err)
	call := bulkhead.DecorateFunc(bh, okCall)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 1)
	}
}

func BenchmarkOB1_SyncRejectedRecorded(b *testing.B) {
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.Observe(kindtest.NopObserver{}))
	require.NoError(b, err)
	bh.TryAcquire()
	call := bulkhead.DecorateFunc(bh, okCall)
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
