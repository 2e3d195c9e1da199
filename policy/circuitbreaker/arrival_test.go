package circuitbreaker_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

// A call whose context is nil or already done never runs the function and leaves no
// trace: closed, nothing recorded; open past its wait, no move to half-open; half-open,
// no trial taken; open, no rejection counted; no event in any state. It returns the
// context's error as is (fault: the breaker took the trial and recorded the outcome; a
// nil context panicked).
func TestDoneContextOnArrivalSync(t *testing.T) {
	for _, tc := range ctxtest.OverContexts() {
		t.Run(tc.Name, func(t *testing.T) {
			f := openedBreaker(t, 1)
			before := len(f.rec.all())
			check := func(state string) {
				t.Helper()
				calls := f.calls
				v, err := f.call(tc.Ctx, fail)
				require.ErrorIs(t, err, tc.Want)
				require.NotErrorIs(t, err, cb.ErrOpen)
				assert.Empty(t, v)
				assert.Equal(t, calls, f.calls, "the function did not run")
				assert.Equal(t, state, f.state())
				assert.Len(t, f.rec.all(), before, "no event")
			}
			check(cb.Open) // open: no rejection
			assert.Zero(t, f.b.Snapshot().NotPermittedCalls)

			f.clk.Advance(10 * time.Second)
			check(cb.Open) // the wait is over: still no move to half-open

			f.do(ok) // the one trial: closes
			require.Equal(t, cb.Closed, f.state())
			before = len(f.rec.all())
			check(cb.Closed)
			assert.Equal(t, 0, f.b.Snapshot().BufferedCalls, "nothing recorded")

			g := openedBreaker(t, 1)
			g.clk.Advance(10 * time.Second)
			held := make(chan struct{})
			trial := cb.DecorateFunc(g.b, func(ctx context.Context, _ int) (int, error) {
				// Within the trial, a done call neither takes a slot nor changes the state.
				_, err := g.call(tc.Ctx, ok)
				assert.ErrorIs(t, err, tc.Want)
				close(held)
				return 0, nil
			})
			_, err := trial(context.Background(), 0)
			require.NoError(t, err)
			<-held
			require.Equal(t, cb.Closed, g.state(), "the one trial was the real call's")
		})
	}
}

// The same for asynchronous calls: a future failed with the context's error, next not
// called, no trial taken, nothing recorded, no event.
func TestDoneContextOnArrivalAsync(t *testing.T) {
	for _, tc := range ctxtest.OverContexts() {
		t.Run(tc.Name, func(t *testing.T) {
			a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(10*time.Second), cb.PermittedInHalfOpen(1))
			check := func(state string) {
				t.Helper()
				calls, events := a.calls, len(a.rec.all())
				fut := a.acall(tc.Ctx, struct{}{})
				require.NotNil(t, fut)
				_, done, err := fut.Result()
				require.True(t, done)
				require.ErrorIs(t, err, tc.Want)
				assert.Equal(t, calls, a.calls, "next was not called")
				assert.Equal(t, state, a.state())
				assert.Len(t, a.rec.all(), events, "no event")
			}
			check(cb.Closed)
			assert.Equal(t, 0, a.b.Snapshot().BufferedCalls)

			_, c := a.start()
			c("", errBoom)
			require.Equal(t, cb.Open, a.state())
			check(cb.Open)
			assert.Zero(t, a.b.Snapshot().NotPermittedCalls)
			a.clk.Advance(10 * time.Second)
			check(cb.Open)

			_, c = a.start() // the trial
			require.NotNil(t, c)
			check(cb.HalfOpen)
			c("ok", nil)
			require.Equal(t, cb.Closed, a.state())
		})
	}
}

// A next that returns a nil future makes a failed call, not a panic: the caller gets a
// future failed with async.ErrNilFuture, and the breaker records a failure, so that a
// half-open trial is not left taken (fault: the decorator returned the nil future).
func TestNilFutureIsAFailure(t *testing.T) {
	f := openedBreaker(t, 1)
	var calls int
	call := cb.DecorateAsyncFunc(f.b, func(context.Context, int) *async.Future[int] {
		calls++
		return nil
	})
	f.clk.Advance(10 * time.Second)
	fut := call(context.Background(), 0)
	require.NotNil(t, fut)
	_, err := fut.Await(context.Background())
	require.ErrorIs(t, err, async.ErrNilFuture)
	require.Equal(t, cb.Open, f.state(), "the trial failed: open again")

	g := newFixture(t, cb.SlidingWindowSize(1))
	gcall := cb.DecorateAsyncFunc(g.b, func(context.Context, int) *async.Future[int] { return nil })
	_, err = gcall(context.Background(), 0).Await(context.Background())
	require.ErrorIs(t, err, async.ErrNilFuture)
	require.Equal(t, cb.Open, g.state(), "closed: recorded as a failure")

	h := newFixture(t, cb.SlidingWindowSize(1), cb.IgnoreOn(async.ErrNilFuture))
	hcall := cb.DecorateAsyncFunc(h.b, func(context.Context, int) *async.Future[int] { return nil })
	_, err = hcall(context.Background(), 0).Await(context.Background())
	require.ErrorIs(t, err, async.ErrNilFuture)
	require.Equal(t, cb.Closed, h.state(), "IgnoreOn applies to it as to any error")

	_ = h.b.TransitionTo(cb.Disabled)
	fut = hcall(context.Background(), 0)
	require.NotNil(t, fut, "disabled: a failed future too")
	_, err = fut.Await(context.Background())
	require.ErrorIs(t, err, async.ErrNilFuture)
}

const forever = time.Duration(math.MaxInt64) // about 292 years

// Durations at the end of the representable range saturate instead of wrapping into
// negative waits: an open wait of 292 years keeps the breaker open and reports a positive
// time until half-open; a half-open bound of 292 years never gives up; a slow-call
// threshold of 292 years never counts a call as slow (fault: the arithmetic could
// overflow).
func TestHugeDurationsSaturate(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(forever))
	f.clk.Advance(time.Hour)
	f.do(fail)
	f.clk.Advance(24 * time.Hour)
	f.rejected()
	assert.Equal(t, forever-25*time.Hour, f.rec.lastRejection(t).RetryAfter)
	f.clk.AdvanceTo(forever - time.Second)
	f.rejected()
	require.Equal(t, cb.Open, f.state())
	assert.Equal(t, time.Second, f.rec.lastRejection(t).RetryAfter, "the deadline saturates at the end of time")

	g := openedBreaker(t, 1, cb.MaxWaitInHalfOpen(forever), cb.SlowCallThreshold(forever))
	g.clk.Advance(10 * time.Second)
	held := make(chan struct{})
	var nested *cb.OpenError
	trial := cb.DecorateFunc(g.b, func(context.Context, int) (int, error) {
		g.clk.Advance(200 * 365 * 24 * time.Hour)
		nested = g.rejected() // 200 years into the trial: still half-open
		close(held)
		return 0, nil
	})
	_, err := trial(context.Background(), 0)
	require.NoError(t, err)
	<-held
	assert.Equal(t, cb.HalfOpen, nested.State())
	require.Equal(t, cb.Closed, g.state(), "a 200-year trial is neither given up nor slow")

	// The clock itself near the end of time: the open deadline saturates.
	h := newFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(time.Hour))
	h.clk.AdvanceTo(forever - time.Minute)
	h.do(fail)
	h.rejected()
	assert.Equal(t, time.Minute, h.rec.lastRejection(t).RetryAfter)
}
