package throttle_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/throttle"
)

var (
	errRefused = errors.New("429 too many requests")
	errOther   = errors.New("404 not found")
	errLocal   = errors.New("local rejection")
)

// fixedSource is a rand.Source whose numbers the test sets: rand.Rand's Float64 is the
// low 53 bits of one of them over 2⁵³.
type fixedSource struct{ v uint64 }

func (s *fixedSource) Uint64() uint64 { return s.v }

// draws makes u, in [0, 1], the source's every Float64 (1 for u ≥ 1 is 1 − 2⁻⁵³).
func (s *fixedSource) draws(u float64) {
	s.v = uint64(math.Min(u*(1<<53), 1<<53-1))
}

// fixture is a throttle on a manual clock with a source the test sets, and a function
// that returns the error the test sets.
type fixture struct {
	t   *throttle.Throttle
	clk *clock.Manual
	src *fixedSource
	rec *contracttest.Recorder
	err error // what the function returns
	ran int   // how many times it ran
}

func newFixture(t *testing.T, opts ...throttle.Option) *fixture {
	t.Helper()
	f := &fixture{clk: clock.NewManual(), src: &fixedSource{}, rec: &contracttest.Recorder{}}
	th, err := throttle.New(append([]throttle.Option{throttle.WithClock(f.clk), throttle.RandomSource(f.src),
		throttle.Name("backend"), throttle.OnEvent(f.rec.Listen)}, opts...)...)
	require.NoError(t, err)
	f.t = th
	return f
}

// call makes one call through the throttle.
func (f *fixture) call() error {
	_, err := throttle.DecorateFunc(f.t, func(context.Context, int) (int, error) {
		f.ran++
		return 1, f.err
	})(context.Background(), 0)
	return err
}

// calls makes n calls that the backend answers with err, drawing u each time.
func (f *fixture) calls(n int, err error, u float64) (rejected int) {
	f.err = err
	f.src.draws(u)
	for range n {
		if errors.Is(f.call(), throttle.ErrThrottled) {
			rejected++
		}
	}
	return rejected
}

// SPEC TH-1: the probability, capped at MaxRejection.
func TestProbability(t *testing.T) {
	c := throttle.DefaultConfig()
	assert.Zero(t, throttle.Probability(c, 0, 0), "an empty window")
	assert.Zero(t, throttle.Probability(c, 10, 5), "requests = K·accepts")
	assert.InDelta(t, 1.0/12, throttle.Probability(c, 11, 5), 1e-12)
	assert.InDelta(t, 50.0/101, throttle.Probability(c, 100, 25), 1e-12)
	assert.Equal(t, 0.9, throttle.Probability(c, 100, 0), "capped at MaxRejection")
	c.MaxRejection = 1
	assert.InDelta(t, 100.0/101, throttle.Probability(c, 100, 0), 1e-12, "never 1")
	c.K = 1
	assert.InDelta(t, 50.0/101, throttle.Probability(c, 100, 50), 1e-12)
}

// SPEC TH-3: calls in flight count for nothing, and an empty window rejects nothing: a burst into a
// new throttle is not throttled.
func TestEmptyWindowAdmits(t *testing.T) {
	f := newFixture(t)
	f.src.draws(0) // would reject at any probability above 0
	var inner func(context.Context, int) (int, error)
	inner = func(ctx context.Context, depth int) (int, error) {
		if depth < 10 {
			return throttle.DecorateFunc(f.t, inner)(ctx, depth+1)
		}
		return 0, nil
	}
	_, err := throttle.DecorateFunc(f.t, inner)(context.Background(), 0)
	require.NoError(t, err, "11 nested calls, none counted until it returns")
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 11, Accepts: 11}, f.t.Snapshot())
}

// SPEC TH-1, TH-5, TH-7: a call is rejected when the random draw is below the window's probability; a rejected
// call counts as a request, never runs the function, and publishes EventRejected.
func TestRejectsWithTheWindowsProbability(t *testing.T) {
	f := newFixture(t)
	require.Zero(t, f.calls(4, nil, 0))
	require.Zero(t, f.calls(4, errRefused, 0), "up to 8 requests for 4 accepts: p = 0")
	require.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 8, Accepts: 4}, f.t.Snapshot())
	require.Zero(t, f.calls(1, errRefused, 0), "8 ≤ 2·4 when it arrived")
	p := 1.0 / 10 // (9 − 8) / (9 + 1)
	require.InDelta(t, p, f.t.Snapshot().Probability, 1e-12)

	assert.Zero(t, f.calls(1, nil, p+0.001), "a draw at or above p is admitted")
	require.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 10, Accepts: 5}, f.t.Snapshot())
	require.Zero(t, f.calls(1, errRefused, 0))
	p = 1.0 / 12 // 11 requests, 5 accepts
	require.InDelta(t, p, f.t.Snapshot().Probability, 1e-12)

	ran := f.ran
	f.src.draws(p - 0.001)
	err := f.call()
	assert.ErrorIs(t, err, throttle.ErrThrottled, "a draw below p is rejected")
	assert.Equal(t, ran, f.ran, "the function did not run")
	assert.Equal(t, 12, f.t.Snapshot().Requests, "the rejected call is a request")
	assert.Equal(t, 5, f.t.Snapshot().Accepts)

	ev := f.rec.Of(throttle.EventRejected)
	require.Len(t, ev, 1)
	assert.Equal(t, "backend", ev[0].Instance)
	assert.ErrorIs(t, ev[0].Err, throttle.ErrThrottled)
	assert.InDelta(t, p, ev[0].Attr("probability").Float64(), 1e-12)

	// The cap: a backend that refuses everything leaves at least 1 − MaxRejection.
	f = newFixture(t)
	f.calls(100, errRefused, 1)
	assert.Equal(t, 0.9, f.t.Snapshot().Probability)
	assert.Zero(t, f.calls(10, errRefused, 0.9), "a draw of 0.9 passes a cap of 0.9")
}

// SPEC TH-4: what counts as an accept: by default a nil error only; with RefusedOn only the listed
// errors are refusals; RefusedIf adds results; IgnoreOn counts nothing and wins.
func TestClassification(t *testing.T) {
	f := newFixture(t)
	f.calls(1, nil, 1)
	f.calls(1, errOther, 1)
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 2, Accepts: 1}, f.t.Snapshot(), "every error refuses")

	f = newFixture(t, throttle.RefusedOn(errRefused), throttle.IgnoreOn(errLocal))
	f.calls(1, errOther, 1)
	f.calls(1, errRefused, 1)
	f.calls(1, errLocal, 1)
	f.calls(1, context.Canceled, 1)
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 3, Accepts: 2}, f.t.Snapshot())

	f = newFixture(t, throttle.RefusedOn(errRefused), throttle.IgnoreOn(errRefused),
		throttle.RefusedIf(func(v int, err error) bool { return v == 1 }))
	f.calls(1, nil, 1) // the function returns 1: refused by the predicate
	f.calls(1, errRefused, 1)
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 1, Accepts: 0, Probability: 0.5}, f.t.Snapshot(),
		"IgnoreOn wins over RefusedOn")
}

// SPEC TH-4: a call that panics, or whose predicate panics, counts as a refusal, and the panic
// goes on.
func TestPanicsCountAsRefusals(t *testing.T) {
	f := newFixture(t)
	panicky := throttle.DecorateFunc(f.t, func(context.Context, int) (int, error) { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() { _, _ = panicky(context.Background(), 0) })
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 1, Probability: 0.5}, f.t.Snapshot())

	f = newFixture(t, throttle.RefusedIf(func(int, error) bool { panic("pred") }))
	assert.PanicsWithValue(t, "pred", func() { _ = f.call() })
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 1, Probability: 0.5}, f.t.Snapshot())
}

// SPEC TH-3: the window slides: calls count for at most one Window.
func TestWindowSlides(t *testing.T) {
	f := newFixture(t, throttle.Window(20*time.Second))
	f.calls(10, errRefused, 1)
	f.clk.Advance(19 * time.Second)
	f.calls(1, nil, 1)
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 11, Accepts: 1, Probability: 0.75}, f.t.Snapshot())
	f.clk.Advance(time.Second)
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 1, Accepts: 1}, f.t.Snapshot())

	// A call counts in the bucket of the time it was admitted; one whose outcome comes
	// after that bucket has left the window counts for nothing.
	slow := func(d time.Duration) {
		_, err := throttle.DecorateFunc(f.t, func(context.Context, int) (int, error) {
			f.clk.Advance(d)
			return 1, nil
		})(context.Background(), 0)
		require.NoError(t, err)
	}
	f.clk.Advance(time.Minute) // an empty window, at 80s
	slow(15 * time.Second)     // admitted at 80s, returns at 95s
	assert.Equal(t, 1, f.t.Snapshot().Accepts)
	f.clk.Advance(5 * time.Second)
	assert.Zero(t, f.t.Snapshot().Accepts, "its bucket, of 80s, left at 100s")
	slow(20 * time.Second)
	assert.Zero(t, f.t.Snapshot().Requests, "a call longer than the window counts for nothing")
}

// SPEC TH-5: the retry-after of a rejection is read from the throttle when asked: the time until
// enough of the oldest buckets have left the window that it admits every call.
func TestRetryAfter(t *testing.T) {
	f := newFixture(t, throttle.Window(20*time.Second)) // 1s buckets
	f.calls(4, errRefused, 1)                           // at 0s
	f.clk.Advance(5 * time.Second)
	f.calls(2, nil, 1) // at 5s: 6 requests, 2 accepts
	f.clk.Advance(2500 * time.Millisecond)
	require.Positive(t, f.t.Snapshot().Probability)
	f.src.draws(0)
	err := f.call()
	require.ErrorIs(t, err, throttle.ErrThrottled)
	var ra policy.RetryAfter
	require.ErrorAs(t, err, &ra)
	d, ok := ra.RetryAfter()
	require.True(t, ok)
	// At 20s the bucket of 0s leaves: 3 requests (2 at 5s, the rejection at 7.5s), 2 accepts.
	assert.Equal(t, 12500*time.Millisecond, d)
	rej, ok := errors.AsType[policy.Rejection](err)
	require.True(t, ok)
	assert.Equal(t, throttle.Layer, rej.RejectedBy())
	assert.Equal(t, policy.RefusalOverloaded, rej.Refusal())
	in, ok := rej.RetryIn()
	assert.True(t, ok)
	assert.Equal(t, d, in)
	f.clk.Advance(d)
	in, _ = rej.RetryIn()
	assert.Zero(t, in, "read when asked")
	assert.Zero(t, f.t.Snapshot().Probability)
	assert.Equal(t, `throttle: throttle "backend" rejected the call locally, the backend refusing too many`, err.Error())

	_, ok = throttle.ErrThrottled.(policy.RetryAfter).RetryAfter()
	assert.False(t, ok, "ErrThrottled itself tells none")
	ev := f.rec.Of(throttle.EventRejected)
	require.Len(t, ev, 1)
	assert.Equal(t, 12500*time.Millisecond, ev[0].RetryAfter)
}

// SPEC TH-6: a nil or done context is refused with its error as is: nothing counted, run or
// published. A disabled throttle lets every other call through uncounted.
func TestArrivalAndDisabled(t *testing.T) {
	for _, over := range ctxtest.OverContexts() {
		f := newFixture(t)
		_, err := throttle.DecorateFunc(f.t, func(context.Context, int) (int, error) { return 0, nil })(over.Ctx, 0)
		assert.ErrorIs(t, err, over.Want, over.Name)
		assert.NotErrorIs(t, err, throttle.ErrThrottled)
		fut := throttle.DecorateAsyncFunc(f.t, func(context.Context, int) *async.Future[int] { return async.Completed(1) })(over.Ctx, 0)
		_, err = fut.Await(context.Background())
		assert.ErrorIs(t, err, over.Want, over.Name)
		assert.Equal(t, throttle.Snapshot{Instance: "backend"}, f.t.Snapshot())
		assert.Empty(t, f.rec.Events())
	}
	f := newFixture(t, throttle.Enabled(false))
	f.calls(10, errRefused, 0)
	assert.Equal(t, 10, f.ran)
	assert.Equal(t, throttle.Snapshot{Instance: "backend"}, f.t.Snapshot())
}

// SPEC TH-3, TH-4, TH-5: asynchronous calls: decided on when called, counted when their future completes; a
// canceled future counts for nothing; a rejection is a failed future.
func TestAsync(t *testing.T) {
	f := newFixture(t)
	pending := map[int]func(int, error){}
	call := throttle.DecorateAsyncFunc(f.t, func(_ context.Context, i int) *async.Future[int] {
		fut, complete := async.NewPromise[int]()
		pending[i] = complete
		return fut
	})
	futs := make([]*async.Future[int], 4)
	for i := range futs {
		futs[i] = call(context.Background(), i)
	}
	assert.Equal(t, throttle.Snapshot{Instance: "backend"}, f.t.Snapshot(), "nothing counted in flight")
	pending[0](1, nil)
	pending[1](0, errRefused)
	pending[2](0, errRefused)
	futs[3].Cancel()
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 3, Accepts: 1, Probability: 1.0 / 4},
		f.t.Snapshot())
	f.src.draws(0)
	fut := call(context.Background(), 5)
	_, err := fut.Await(context.Background())
	assert.ErrorIs(t, err, throttle.ErrThrottled)
	assert.NotContains(t, pending, 5, "not called")
	assert.Same(t, fut, call(context.Background(), 6), "the rejection's future is made once")
}

// SPEC TH-1: the probability is the window's when the call arrives, also when it changed
// only because old buckets left the window, with no call counted since.
func TestProbabilityAfterBucketsLeave(t *testing.T) {
	f := newFixture(t, throttle.Window(20*time.Second)) // 1s buckets
	require.Zero(t, f.calls(10, nil, 0))
	f.clk.Advance(10 * time.Second)
	require.Zero(t, f.calls(5, errRefused, 0), "15 requests, 10 accepts: p = 0")
	f.clk.Advance(10 * time.Second) // the 10 accepts leave
	assert.Equal(t, 1, f.calls(1, nil, 0), "5 requests, no accept: p = 5/6, and the draw is 0")
	f.clk.Advance(20 * time.Second) // the refusals and the rejection leave too
	assert.Zero(t, f.calls(1, nil, 0))
}
