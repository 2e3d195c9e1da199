package waitq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/rejections"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The outcomes the queue's users record through Events (OB-1): each wait records once,
// with the waiting call's context, and its events carry that context.

// recordedPool is a syncPool whose publisher also records, in rec.
func recordedPool(free int64, clk clock.Clock) (*syncPool, *contracttest.Observed) {
	p := newSyncPool(free, clk)
	rec := &contracttest.Observed{}
	p.pub.Rec = rec
	return p, rec
}

// OB-1: every way a wait ends is recorded once, with the waiter's context: found room
// while queueing (Wait 0), handed room (Wait = how long), MaxWait passed, ctx ended.
// The events go to the listener and to the recorder, with that context.
func TestOB1_SyncWaitRecordsEachWaitOnce(t *testing.T) {
	clk := clock.NewManual()
	p, rec := recordedPool(1, clk)
	ctx := contracttest.MarkedContext()

	_, err := p.s.Wait(ctx, p.maxWait) // room free, nobody queued
	require.NoError(t, err)

	ch := p.waitAsync(ctx)
	clk.Advance(20 * time.Millisecond)
	p.release()
	require.NoError(t, (<-ch).err)

	ch = p.waitAsync(ctx)
	clk.Advance(maxWait)
	require.Same(t, p.rej.Plain, (<-ch).err)

	cctx, cancel := context.WithCancel(ctx)
	ch = p.waitAsync(cctx)
	clk.Advance(5 * time.Millisecond)
	cancel()
	require.Same(t, p.rej.Canceled, (<-ch).err)

	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultAdmitted},
		{Result: observe.ResultAdmitted, Wait: 20 * time.Millisecond},
		{Result: observe.ResultRejected, Err: p.rej.Plain},
		{Result: observe.ResultRejected, Err: p.rej.Canceled},
	}, rec.Outcomes())
	assert.Equal(t, []any{"marker", "marker", "marker", "marker"}, contracttest.Markers(rec.Contexts()))
	want := []policy.Event{
		{Kind: testWaited, Instance: "test", At: 20 * time.Millisecond, Wait: 20 * time.Millisecond},
		{Kind: testRejected, Instance: "test", At: 20*time.Millisecond + maxWait, Wait: maxWait, Err: p.rej.Plain},
		{Kind: testRejected, Instance: "test", At: 25*time.Millisecond + maxWait, Wait: 5 * time.Millisecond,
			Err: p.rej.Canceled},
	}
	assert.Equal(t, want, rec.Events())
	assert.Equal(t, want, p.published(), "the listener gets the same events")
	assert.Equal(t, []any{"marker", "marker", "marker"}, contracttest.Markers(rec.EventContexts()))
}

// OB-1: Events' methods record what they say, with the context given (a nil one, on
// arrival, as context.Background()); without a recorder they record nothing and publish
// as before; Admit and Refuse publish nothing.
func TestOB1_EventsRecordWithTheCallsContext(t *testing.T) {
	clk := clock.NewManual()
	rec := &contracttest.Observed{}
	var published []policy.Event
	pub := contract.Events{ID: "test", Clock: clk, Rec: rec}
	rej := rejections.New(func(cause error) *fullError { return &fullError{cause} })
	e := waitq.Events[*fullError]{Pub: &pub, Rej: &rej, Clock: clk, Rejected: testRejected, Waited: testWaited}
	ctx := contracttest.MarkedContext()

	clk.Advance(time.Second)
	e.Admit(ctx)
	var none context.Context // a call that came without one
	assert.Same(t, rej.Canceled, e.Refuse(none, context.Canceled))
	e.Reject(ctx, 0, rej.Plain)
	assert.Same(t, rej.Plain, e.Expired(ctx, 0))
	assert.Same(t, rej.Deadline, e.RejectContext(ctx, 3*time.Millisecond, context.DeadlineExceeded))
	e.AdmitWaited(ctx, 400*time.Millisecond)

	assert.Equal(t, []observe.Outcome{
		{Result: observe.ResultAdmitted},
		{Result: observe.ResultRejected, Err: rej.Canceled},
		{Result: observe.ResultRejected, Err: rej.Plain},
		{Result: observe.ResultRejected, Err: rej.Plain},
		{Result: observe.ResultRejected, Err: rej.Deadline},
		{Result: observe.ResultAdmitted, Wait: 600 * time.Millisecond},
	}, rec.Outcomes())
	assert.Equal(t, []any{"marker", nil, "marker", "marker", "marker", "marker"}, contracttest.Markers(rec.Contexts()))
	assert.Equal(t, []policy.EventKind{testRejected, testRejected, testRejected, testWaited}, kinds(rec.Events()))
	assert.Equal(t, []any{"marker", "marker", "marker", "marker"}, contracttest.Markers(rec.EventContexts()))

	pub.Rec, pub.Listener = nil, func(ev policy.Event) { published = append(published, ev) }
	e.Admit(ctx)
	assert.Same(t, rej.Canceled, e.Refuse(ctx, context.Canceled))
	e.AdmitWaited(ctx, 0)
	assert.Len(t, rec.Outcomes(), 6, "no recorder: nothing recorded")
	assert.Equal(t, []policy.EventKind{testWaited}, kinds(published))
}

// OB-1, rule 2: recording through Events allocates nothing.
func TestOB1_EventsRecordingAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	pub := contract.Events{ID: "test", Clock: clk, Rec: contracttest.NopRecorder{}}
	rej := rejections.New(func(cause error) *fullError { return &fullError{cause} })
	e := waitq.Events[*fullError]{Pub: &pub, Rej: &rej, Clock: clk, Rejected: testRejected, Waited: testWaited}
	ctx := contracttest.MarkedContext()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		e.Admit(ctx)
		_ = e.Refuse(ctx, context.Canceled)
		e.Reject(ctx, 0, rej.Plain)
		e.AdmitWaited(ctx, 0)
		_ = e.Expired(ctx, 0)
	}))
}

func kinds(evs []policy.Event) []policy.EventKind {
	var out []policy.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}
