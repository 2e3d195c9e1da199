package contracttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Queueing is an instance of a policy that lets calls in while it has room and queues the
// others for up to its MaxWait (a bulkhead, an adaptive limiter), as the shared tests of
// its outcome recording drive it. Built by QueueingSubject.New, it has room for one call.
type Queueing interface {
	// Decorate and DecorateAsync are the package's DecorateFunc and DecorateAsyncFunc.
	Decorate(next decorate.Func[int, string]) decorate.Func[int, string]
	DecorateAsync(next func(context.Context, int) *async.Future[string]) func(context.Context, int) *async.Future[string]
	// TryAcquire and Acquire take the room directly, as the package's own methods do;
	// Release gives back the room the last one took.
	TryAcquire() bool
	Acquire(ctx context.Context) error
	Release()
	Rejection() error // the instance's plain rejection
	Queued() int      // the calls waiting for room
	InUse() int       // the room taken
}

// QueueingSubject is a queueing policy package, as the shared tests of its outcome
// recording (RunQueueingRecording) see it.
type QueueingSubject struct {
	Layer    policy.Layer
	ID       string           // the instance id New gives
	Rejected policy.EventKind // the event of a rejection
	Waited   policy.EventKind // the event of a call let in after waiting
	ErrFull  error            // what every rejection matches
	// New builds an instance with room for one call, with the id ID, on clk, observed by
	// obs, waiting up to maxWait; disabled when enabled is false.
	New func(t testing.TB, clk clock.Clock, obs observe.Observer, maxWait time.Duration, enabled bool) Queueing
}

// HookClock is a manual clock that runs Hook, once, when the next timer is armed: for a
// queueing policy, the moment between a call's look for room and its place in the queue.
type HookClock struct {
	*clock.Manual
	Hook func()
}

// AfterFunc runs Hook, if set, then arms the timer on the manual clock.
func (c *HookClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if h := c.Hook; h != nil {
		c.Hook = nil
		h()
	}
	return c.Manual.AfterFunc(d, f)
}

// observed builds s's instance on a manual clock with an Observer, checks that the
// observer was asked once, for the instance's layer and id, and returns the recorder it
// made.
func (s QueueingSubject) observed(t *testing.T, maxWait time.Duration, enabled bool) (Queueing, *clock.Manual, *Observed) {
	t.Helper()
	clk := clock.NewManual()
	obs := &Observer{}
	q := s.New(t, clk, obs, maxWait, enabled)
	require.Equal(t, []ObservedKey{{Layer: s.Layer, ID: s.ID}}, obs.Order,
		"the observer is asked once, for the instance's layer and id")
	return q, clk, obs.Of(s.Layer, s.ID)
}

var admitted0 = observe.Outcome{Result: observe.ResultAdmitted}

func admittedAfter(d time.Duration) observe.Outcome {
	return observe.Outcome{Result: observe.ResultAdmitted, Wait: d}
}

func rejectedFor(err error) observe.Outcome {
	return observe.Outcome{Result: observe.ResultRejected, Err: err}
}

func okCall(context.Context, int) (string, error) { return "ok", nil }

func kinds(evs []policy.Event) []policy.EventKind {
	var out []policy.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// RunQueueingRecording runs, as subtests, the tests of the outcome recording of
// the queueing policy s: each admission decision is recorded once, with the call's
// context, and every event reaches the recorder with it.
func RunQueueingRecording(t *testing.T, s QueueingSubject) {
	t.Run("RecordsAdmittedAndRejected", s.recordsAdmittedAndRejected)
	t.Run("RecordsSyncWaits", s.recordsSyncWaits)
	t.Run("RecordsRefusalsOnArrival", s.recordsRefusalsOnArrival)
	t.Run("AsyncRecordsAdmittedAndRejected", s.asyncRecordsAdmittedAndRejected)
	t.Run("AsyncAdmittedAsItQueues", s.asyncAdmittedAsItQueues)
	t.Run("DirectCallsRecord", s.directCallsRecord)
	t.Run("UnrecordedRecordsNothing", s.unrecordedRecordsNothing)
	t.Run("RecordingAllocatesNothing", s.recordingAllocatesNothing)
}

// A decorated synchronous call records ResultAdmitted (Wait 0) or ResultRejected once,
// with its context; its rejection event reaches the recorder with that context.
func (s QueueingSubject) recordsAdmittedAndRejected(t *testing.T) {
	q, _, rec := s.observed(t, 0, true)
	var call decorate.Func[int, string]
	call = q.Decorate(func(ctx context.Context, depth int) (string, error) {
		if depth == 0 {
			_, err := call(ctx, 1) // the only room is taken
			require.ErrorIs(t, err, s.ErrFull)
		}
		return "ok", nil
	})
	_, err := call(MarkedContext(), 0)
	require.NoError(t, err)

	RequireOutcomes(t, rec, admitted0, rejectedFor(s.ErrFull))
	assert.Same(t, q.Rejection(), rec.Outcomes()[1].Err)
	assert.Equal(t, []any{"marker", "marker"}, Markers(rec.Contexts()))
	assert.Equal(t, []policy.Event{{Kind: s.Rejected, Instance: s.ID, At: 0, Err: q.Rejection()}}, rec.Events())
	assert.Equal(t, []any{"marker"}, Markers(rec.EventContexts()))
	rej, ok := errors.AsType[policy.Rejection](rec.Outcomes()[1].Err)
	require.True(t, ok)
	assert.Equal(t, s.Layer, rej.RejectedBy())
}

// A synchronous call that waits is recorded once its wait is over: admitted with how long
// it waited, or rejected when MaxWait passes or its context ends. Its events carry its
// context.
func (s QueueingSubject) recordsSyncWaits(t *testing.T) {
	q, clk, rec := s.observed(t, time.Second, true)
	call := q.Decorate(okCall)
	ctx := MarkedContext()
	require.NoError(t, q.Acquire(ctx))

	wait := func(ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() { _, err := call(ctx, 1); done <- err }()
		Eventually(t, func() bool { return q.Queued() == 1 }, "waiter queued")
		return done
	}

	done := wait(ctx) // let in after 300ms
	clk.Advance(300 * time.Millisecond)
	q.Release()
	require.NoError(t, <-done)

	require.NoError(t, q.Acquire(ctx))
	done = wait(ctx) // MaxWait passes
	clk.Advance(time.Second)
	require.ErrorIs(t, <-done, s.ErrFull)

	cctx, cancel := context.WithCancel(ctx)
	done = wait(cctx) // its context ends
	clk.Advance(100 * time.Millisecond)
	cancel()
	err := <-done
	require.ErrorIs(t, err, s.ErrFull)
	require.ErrorIs(t, err, context.Canceled)
	q.Release()

	RequireOutcomes(t, rec, admitted0, admittedAfter(300*time.Millisecond), admitted0, rejectedFor(s.ErrFull),
		rejectedFor(context.Canceled))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker", "marker"}, Markers(rec.Contexts()))
	assert.Equal(t, []policy.Event{
		{Kind: s.Waited, Instance: s.ID, At: 300 * time.Millisecond, Wait: 300 * time.Millisecond},
		{Kind: s.Rejected, Instance: s.ID, At: 1300 * time.Millisecond, Wait: time.Second, Err: q.Rejection()},
		{Kind: s.Rejected, Instance: s.ID, At: 1400 * time.Millisecond, Wait: 100 * time.Millisecond,
			Err: rec.Outcomes()[4].Err},
	}, rec.Events())
	assert.Equal(t, []any{"marker", "marker", "marker"}, Markers(rec.EventContexts()))
	assert.Zero(t, q.InUse())
}

// A call whose context is nil or over when it arrives is recorded as a rejection matching
// the context's error (a nil context as context.Background()), sync and async, and
// publishes nothing.
func (s QueueingSubject) recordsRefusalsOnArrival(t *testing.T) {
	for _, tc := range ctxtest.OverContexts() {
		t.Run(tc.Name, func(t *testing.T) {
			q, _, rec := s.observed(t, 0, true)
			_, err := q.Decorate(okCall)(tc.Ctx, 1)
			require.ErrorIs(t, err, tc.Want)
			_, err = q.DecorateAsync(NewCalls().Next)(tc.Ctx, 1).Await(context.Background())
			require.ErrorIs(t, err, tc.Want)
			RequireOutcomes(t, rec, rejectedFor(tc.Want), rejectedFor(tc.Want))
			assert.NotContains(t, Markers(rec.Contexts()), "nil context")
			assert.Empty(t, rec.Events())
			assert.Zero(t, q.InUse())
		})
	}
}

// An asynchronous call is recorded once, with its context, when the policy decides: at
// once, when it starts after waiting (with how long), when MaxWait passes or when its
// context ends; a call whose future is canceled while it waits records nothing.
func (s QueueingSubject) asyncRecordsAdmittedAndRejected(t *testing.T) {
	q, clk, rec := s.observed(t, time.Second, true)
	c := NewCalls()
	call := q.DecorateAsync(c.Next)
	ctx := MarkedContext()

	call(ctx, 1)             // starts at once
	second := call(ctx, 2)   // let in after 200ms
	expiring := call(ctx, 3) // MaxWait passes
	RequireOutcomes(t, rec, admitted0)
	clk.Advance(200 * time.Millisecond)
	c.Finish(1)
	assert.Equal(t, []int{1, 2}, c.Started())
	RequireOutcomes(t, rec, admitted0, admittedAfter(200*time.Millisecond))

	clk.Advance(800 * time.Millisecond)
	_, err := expiring.Await(context.Background())
	require.ErrorIs(t, err, s.ErrFull)

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

	RequireOutcomes(t, rec, admitted0, admittedAfter(200*time.Millisecond), rejectedFor(s.ErrFull),
		rejectedFor(context.Canceled))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker"}, Markers(rec.Contexts()))
	assert.Equal(t, []policy.EventKind{s.Waited, s.Rejected, s.Rejected}, kinds(rec.Events()))
	assert.Equal(t, []any{"marker", "marker", "marker"}, Markers(rec.EventContexts()))
	assert.Zero(t, clk.PendingTasks())
	assert.Zero(t, q.InUse())

	// MaxWait 0: refused at once.
	q0, _, rec0 := s.observed(t, 0, true)
	call0 := q0.DecorateAsync(c.Next)
	call0(ctx, 6)
	_, err = call0(ctx, 7).Await(context.Background())
	require.ErrorIs(t, err, s.ErrFull)
	RequireOutcomes(t, rec0, admitted0, rejectedFor(s.ErrFull))
	assert.Equal(t, []any{"marker", "marker"}, Markers(rec0.Contexts()))
	assert.Equal(t, []any{"marker"}, Markers(rec0.EventContexts()))
	c.Finish(6)
}

// An asynchronous call that finds room as it is being queued (room made meanwhile, with
// nobody waiting) starts at once and is recorded as admitted, Wait 0.
func (s QueueingSubject) asyncAdmittedAsItQueues(t *testing.T) {
	clk := &HookClock{Manual: clock.NewManual()}
	obs := &Observer{}
	q := s.New(t, clk, obs, time.Second, true)
	rec := obs.Of(s.Layer, s.ID)
	require.True(t, q.TryAcquire())
	clk.Hook = q.Release // the room comes back as the call arms its MaxWait timer
	c := NewCalls()
	q.DecorateAsync(c.Next)(MarkedContext(), 1)
	assert.Equal(t, []int{1}, c.Started())
	RequireOutcomes(t, rec, admitted0, admitted0)
	assert.Equal(t, []any{nil, "marker"}, Markers(rec.Contexts()))
	assert.Empty(t, rec.Events(), "it did not wait")
	c.Finish(1)
	assert.Zero(t, clk.PendingTasks())
}

// TryAcquire, which has no context, records with context.Background(); Acquire with its
// ctx.
func (s QueueingSubject) directCallsRecord(t *testing.T) {
	q, _, rec := s.observed(t, 0, true)
	require.True(t, q.TryAcquire())
	require.False(t, q.TryAcquire())
	require.ErrorIs(t, q.Acquire(MarkedContext()), s.ErrFull)
	q.Release()
	require.NoError(t, q.Acquire(MarkedContext()))
	q.Release()
	full := rejectedFor(s.ErrFull)
	RequireOutcomes(t, rec, admitted0, full, full, admitted0)
	assert.Equal(t, []any{nil, nil, "marker", "marker"}, Markers(rec.Contexts()))
	assert.Equal(t, []any{nil, "marker"}, Markers(rec.EventContexts()))
}

// A disabled instance records nothing, and neither does one whose observer gives it no
// recorder.
func (s QueueingSubject) unrecordedRecordsNothing(t *testing.T) {
	q, _, rec := s.observed(t, 0, false)
	_, err := q.Decorate(okCall)(MarkedContext(), 1)
	require.NoError(t, err)
	require.True(t, q.TryAcquire())
	assert.Empty(t, rec.Outcomes())

	none := &NilObserver{}
	q = s.New(t, clock.System(), none, 0, true)
	assert.Equal(t, 1, none.Asked())
	require.True(t, q.TryAcquire())
	require.False(t, q.TryAcquire())
	q.Release()
}

// recordingAllocatesNothing checks that with a recorder, admitted and rejected calls still
// allocate nothing.
func (s QueueingSubject) recordingAllocatesNothing(t *testing.T) {
	ctx := MarkedContext()
	q := s.New(t, clock.System(), NopObserver{}, 0, true)
	call := q.Decorate(okCall)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { q.TryAcquire(); q.Release() }), "TryAcquire admitted")
	require.True(t, q.TryAcquire())
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "rejected")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { q.TryAcquire() }), "TryAcquire rejected")
	q.Release()
}

// BenchmarkQueueingRecorded measures a decorated synchronous call of s with a recorder
// that does nothing: admitted, or, with full, rejected at once.
func BenchmarkQueueingRecorded(b *testing.B, s QueueingSubject, full bool) {
	q := s.New(b, clock.System(), NopObserver{}, 0, true)
	if full {
		q.TryAcquire()
	}
	call := q.Decorate(okCall)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, 1)
	}
}
