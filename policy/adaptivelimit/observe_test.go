package adaptivelimit_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// The outcome recording of adaptive limiters (OB-1): each admission decision is recorded
// once, with the call's context, and every event reaches the recorder with it. The tests
// of the admissions are those of every queueing policy, in kindtest.

// queueing is an adaptive limiter as the shared tests drive it; held are the permits
// its TryAcquire and Acquire took, the last one first to go.
type queueing struct {
	l    *adaptivelimit.Limiter
	held *[]adaptivelimit.Permit
}

func (q queueing) Decorate(next decorate.Func[int, string]) decorate.Func[int, string] {
	return adaptivelimit.DecorateFunc(q.l, next)
}

func (q queueing) DecorateAsync(next func(context.Context, int) *async.Future[string]) func(context.Context, int) *async.Future[string] {
	return adaptivelimit.DecorateAsyncFunc(q.l, next)
}

func (q queueing) TryAcquire() bool {
	p, ok := q.l.TryAcquire()
	if ok {
		*q.held = append(*q.held, p)
	}
	return ok
}

func (q queueing) Acquire(ctx context.Context) error {
	p, err := q.l.Acquire(ctx)
	if err == nil {
		*q.held = append(*q.held, p)
	}
	return err
}

func (q queueing) Release() {
	last := len(*q.held) - 1
	p := (*q.held)[last]
	*q.held = (*q.held)[:last]
	p.Release()
}

func (q queueing) Rejection() error { return q.l.Rejection() }
func (q queueing) Queued() int      { return q.l.Queued() }
func (q queueing) InUse() int       { return q.l.InFlight() }

// subject is an adaptive limiter of fixed limit 1, with the id "al".
var subject = contracttest.QueueingSubject{
	Layer: adaptivelimit.Layer, ID: "al", Rejected: adaptivelimit.EventRejected, Waited: adaptivelimit.EventWaited,
	ErrFull: adaptivelimit.ErrLimitExceeded,
	New: func(t testing.TB, clk clock.Clock, obs observe.Observer, maxWait time.Duration, enabled bool) contracttest.Queueing {
		l, err := adaptivelimit.New(append(fixed(1), adaptivelimit.WithClock(clk), adaptivelimit.Name("al"),
			adaptivelimit.Observe(obs), adaptivelimit.MaxWait(maxWait), adaptivelimit.Enabled(enabled))...)
		require.NoError(t, err)
		return queueing{l: l, held: new([]adaptivelimit.Permit)}
	},
}

// OB-1: admissions and rejections, sync and async, direct or decorated, are recorded once
// with the call's context; unrecorded instances record nothing, and recording allocates
// nothing.
func TestOB1_AdaptiveLimitRecording(t *testing.T) { contracttest.RunQueueingRecording(t, subject) }

// observed returns a limiter with the id "al" on a manual clock, and the recorder its
// observer made for it.
func observed(t *testing.T, opts ...adaptivelimit.Option) (*adaptivelimit.Limiter, *contracttest.Observed) {
	t.Helper()
	obs := &contracttest.Observer{}
	opts = append([]adaptivelimit.Option{adaptivelimit.WithClock(clock.NewManual()), adaptivelimit.Name("al"),
		adaptivelimit.Observe(obs)}, opts...)
	l, err := adaptivelimit.New(opts...)
	require.NoError(t, err)
	return l, obs.Of(adaptivelimit.Layer, "al")
}

// OB-1: AdaptiveLimitChanged reaches the recorder with the context of the call whose
// sample changed the limit, sync or async; with context.Background() when the sample
// came through Permit.Record.
func TestOB1_AdaptiveLimitChangedCarriesTheCallsContext(t *testing.T) {
	l, rec := observed(t, aimd(8)...)
	ctx := contracttest.MarkedContext()
	_, err := adaptivelimit.DecorateFunc(l, func(context.Context, int) (string, error) {
		return "", context.DeadlineExceeded // a drop: AIMD halves the limit
	})(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 4, l.Limit())

	c := contracttest.NewCalls()
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
		{Kind: adaptivelimit.EventChanged, Instance: "al", Attrs: policy.EventAttrs{slog.Int("limit", 4), slog.Int("previous_limit", 8)}},
		{Kind: adaptivelimit.EventChanged, Instance: "al", Attrs: policy.EventAttrs{slog.Int("limit", 2), slog.Int("previous_limit", 4)}},
		{Kind: adaptivelimit.EventChanged, Instance: "al", Attrs: policy.EventAttrs{slog.Int("limit", 1), slog.Int("previous_limit", 2)}},
	}, evs)
	assert.Equal(t, []any{"marker", "marker", nil}, contracttest.Markers(rec.EventContexts()))
	admitted := observe.Outcome{Result: observe.ResultAdmitted}
	contracttest.RequireOutcomes(t, rec, admitted, admitted, admitted)
	assert.Equal(t, []any{"marker", "marker", nil}, contracttest.Markers(rec.Contexts()),
		"TryAcquire records with context.Background()")
}

// Decorated calls with a recorder that does nothing: the cost of recording.
func BenchmarkOB1_AdmittedRecorded(b *testing.B) {
	contracttest.BenchmarkQueueingRecorded(b, subject, false)
}

func BenchmarkOB1_RejectedRecorded(b *testing.B) {
	contracttest.BenchmarkQueueingRecorded(b, subject, true)
}
