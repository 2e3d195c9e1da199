package bulkhead_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The outcome recording of bulkheads (OB-1): each admission decision is recorded once,
// with the call's context, and every event reaches the recorder with it. The tests are
// those of every queueing policy, in kindtest.

// queueing is a bulkhead as the shared tests drive it.
type queueing struct{ b *bulkhead.Bulkhead }

func (q queueing) Decorate(next decorate.Func[int, string]) decorate.Func[int, string] {
	return bulkhead.DecorateFunc(q.b, next)
}

func (q queueing) DecorateAsync(next func(context.Context, int) *async.Future[string]) func(context.Context, int) *async.Future[string] {
	return bulkhead.DecorateAsyncFunc(q.b, next)
}

func (q queueing) TryAcquire() bool                  { return q.b.TryAcquire() }
func (q queueing) Acquire(ctx context.Context) error { return q.b.Acquire(ctx) }
func (q queueing) Release()                          { q.b.Release() }
func (q queueing) Rejection() error                  { return q.b.Rejection() }
func (q queueing) Queued() int                       { return q.b.Snapshot().Waiting }
func (q queueing) InUse() int                        { return 1 - q.b.Snapshot().AvailableSlots }

// subject is a bulkhead of one slot, with the id "bh".
var subject = contracttest.QueueingSubject{
	Layer: bulkhead.Layer, ID: "bh", Rejected: bulkhead.EventRejected, Waited: bulkhead.EventWaited,
	ErrFull: bulkhead.ErrFull,
	New: func(t testing.TB, clk clock.Clock, obs observe.Observer, maxWait time.Duration, enabled bool) contracttest.Queueing {
		b, err := bulkhead.New(bulkhead.WithClock(clk), bulkhead.Name("bh"), bulkhead.Observe(obs),
			bulkhead.MaxConcurrent(1), bulkhead.MaxWait(maxWait), bulkhead.Enabled(enabled))
		require.NoError(t, err)
		return queueing{b}
	},
}

// OB-1: admissions and rejections, sync and async, direct or decorated, are recorded once
// with the call's context; unrecorded instances record nothing, and recording allocates
// nothing.
func TestOB1_BulkheadRecording(t *testing.T) { contracttest.RunQueueingRecording(t, subject) }

// Decorated calls with a recorder that does nothing: the cost of recording.
func BenchmarkOB1_SyncAdmittedRecorded(b *testing.B) {
	contracttest.BenchmarkQueueingRecorded(b, subject, false)
}

func BenchmarkOB1_SyncRejectedRecorded(b *testing.B) {
	contracttest.BenchmarkQueueingRecorded(b, subject, true)
}
