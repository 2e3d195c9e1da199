package circuitbreaker_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

// asyncFixture decorates a function that returns a pending promise; the test completes
// it.
type asyncFixture struct {
	*fixture
	calls    int
	complete []func(string, error)
	acall    decorate.AsyncFunc[struct{}, string]
}

func newAsyncFixture(t *testing.T, opts ...cb.Option) *asyncFixture {
	a := &asyncFixture{fixture: newFixture(t, opts...)}
	a.acall = cb.DecorateAsyncFunc(a.b, func(context.Context, struct{}) *async.Future[string] {
		a.calls++
		f, complete := async.NewPromise[string]()
		a.complete = append(a.complete, complete)
		return f
	})
	return a
}

// start makes an async call and returns its future and the function that completes it
// (nil if the call was rejected).
func (a *asyncFixture) start() (*async.Future[string], func(string, error)) {
	before := a.calls
	f := a.acall(context.Background(), struct{}{})
	if a.calls == before {
		return f, nil
	}
	return f, a.complete[len(a.complete)-1]
}

func TestAsyncOutcomeRecordedOnCompletion(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.SlowCallThreshold(time.Second))
	f1, c1 := a.start()
	f2, c2 := a.start()
	require.NotNil(t, c1)
	require.NotNil(t, c2)
	assert.Equal(t, 0, a.b.Snapshot().BufferedCalls, "nothing recorded before completion")

	a.clk.Advance(time.Second + 1) // the duration runs from the call to the completion
	c1("v", nil)
	s := a.b.Snapshot()
	assert.Equal(t, 1, s.BufferedCalls)
	assert.Equal(t, 1, s.SlowCalls)
	c2("", errBoom)
	require.Equal(t, cb.Open, a.state())

	v, err := f1.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	_, err = f2.Await(context.Background())
	require.ErrorIs(t, err, errBoom)
}

func TestAsyncRejectionIsFailedFuture(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1))
	_, c := a.start()
	c("", errBoom)
	require.Equal(t, cb.Open, a.state())

	f, c := a.start()
	require.Nil(t, c, "the function is not called")
	v, done, err := f.Result()
	require.True(t, done)
	assert.Empty(t, v)
	require.ErrorIs(t, err, cb.ErrOpen)
	var oe *cb.OpenError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "svc", oe.InstanceID())
}

func TestAsyncCancelReleasesWithoutRecording(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(1))
	f, _ := a.start()
	f.Cancel()
	assert.Equal(t, 0, a.b.Snapshot().BufferedCalls, "a canceled call is not recorded")
	require.Equal(t, cb.Closed, a.state())

	_, c := a.start()
	c("", errBoom)
	require.Equal(t, cb.Open, a.state())
	a.clk.Advance(time.Second)

	f, _ = a.start() // the one trial
	require.Equal(t, cb.HalfOpen, a.state())
	_, c = a.start()
	require.Nil(t, c, "no slot left while the trial runs")
	f.Cancel()
	require.Equal(t, cb.HalfOpen, a.state())
	assert.Equal(t, 0, a.b.Snapshot().BufferedCalls)

	_, c = a.start() // the canceled trial gave its slot back
	require.NotNil(t, c)
	c("ok", nil)
	require.Equal(t, cb.Closed, a.state())
}

func TestAsyncStaleOutcomeNotRecorded(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(1))
	_, closedCall := a.start()
	_ = a.b.TransitionTo(cb.ForcedOpen)
	a.b.Reset()
	closedCall("", errBoom) // admitted before the reset
	require.Equal(t, cb.Closed, a.state())
	assert.Equal(t, 0, a.b.Snapshot().BufferedCalls)
}

func TestAsyncAlreadyCompletedFuture(t *testing.T) {
	clk := clock.NewManual()
	b, err := cb.New(cb.WithClock(clk), cb.SlidingWindowSize(1))
	require.NoError(t, err)
	call := cb.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { return async.Failed[int](errBoom) })
	_, err = call(context.Background(), 1).Await(context.Background())
	require.ErrorIs(t, err, errBoom)
	require.Equal(t, cb.Open, b.State())
}

func TestDisabledDecoratorsPassThrough(t *testing.T) {
	b, err := cb.New(cb.WithClock(clock.NewManual()), cb.Enabled(false), cb.SlidingWindowSize(1))
	require.NoError(t, err)
	sync := cb.DecorateFunc(b, func(context.Context, int) (int, error) { return 1, errBoom })
	as := cb.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { return async.Failed[int](errBoom) })
	for range 3 {
		_, err = sync(context.Background(), 0)
		require.ErrorIs(t, err, errBoom)
		_, err = as(context.Background(), 0).Await(context.Background())
		require.ErrorIs(t, err, errBoom)
	}
	require.Equal(t, cb.Disabled, b.State())
}

func TestPanicIsRecordedAsFailure(t *testing.T) {
	f := openedBreaker(t, 1)
	f.clk.Advance(10 * time.Second)
	call := cb.DecorateFunc(f.b, func(context.Context, int) (int, error) { panic("kaboom") })
	require.PanicsWithValue(t, "kaboom", func() { _, _ = call(context.Background(), 0) })
	require.Equal(t, cb.Open, f.state(), "the panicking trial counted as a failure and freed its slot")

	g := newFixture(t, cb.SlidingWindowSize(1))
	acall := cb.DecorateAsyncFunc(g.b, func(context.Context, int) *async.Future[int] { panic("kaboom") })
	require.Panics(t, func() { acall(context.Background(), 0) })
	require.Equal(t, cb.Open, g.state())
}

func TestNewPolicy(t *testing.T) {
	clk := clock.NewManual()
	b, err := cb.New(cb.WithClock(clk), cb.SlidingWindowSize(1))
	require.NoError(t, err)
	p := cb.NewPolicy[string](b)
	assert.Equal(t, cb.Layer, p.Layer())

	calls := 0
	call := p.Decorate(func(context.Context) (string, error) { calls++; return "", errBoom })
	_, err = call(context.Background())
	require.ErrorIs(t, err, errBoom)
	_, err = call(context.Background())
	require.ErrorIs(t, err, cb.ErrOpen) // SPEC CO-2: the inner layers are not reached
	assert.Equal(t, 1, calls)

	acall := p.DecorateAsync(func(context.Context) *async.Future[string] { calls++; return async.Completed("x") })
	_, err = acall(context.Background()).Await(context.Background())
	require.ErrorIs(t, err, cb.ErrOpen)
	assert.Equal(t, 1, calls)
}

// Many goroutines on one breaker: every transition chains from the previous one (events
// are published in the order of the transitions) and the counts stay within the window.
func TestConcurrentCallsKeepStateConsistent(t *testing.T) { concurrentCalls(t) }

// The same with a half-open bound so short that trials often outlive it, so that the
// breaker gives up on them, on calls and on completions, while others race with it.
func TestConcurrentCallsWithHalfOpenBoundKeepStateConsistent(t *testing.T) {
	concurrentCalls(t, cb.MaxWaitInHalfOpen(time.Millisecond))
}

func concurrentCalls(t *testing.T, opts ...cb.Option) {
	clk := clock.NewManual()
	rec := &recorder{}
	const permitted = 3
	b, err := cb.New(append([]cb.Option{cb.WithClock(clk), cb.OnEvent(rec.listen), cb.SlidingWindowSize(20),
		cb.MinimumCalls(10), cb.FailureRateThreshold(30), cb.WaitInOpen(time.Millisecond),
		cb.PermittedInHalfOpen(permitted), cb.SlowCallThreshold(time.Hour)}, opts...)...)
	require.NoError(t, err)

	call := cb.DecorateFunc(b, func(_ context.Context, i int) (int, error) {
		if i%3 == 0 {
			return i, errBoom
		}
		return i, nil
	})

	const goroutines, perG = 16, 2000
	var wg sync.WaitGroup
	var admitted, rejected atomic.Int64
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				if _, err := call(context.Background(), g+i); err == nil || !isOpen(err) {
					admitted.Add(1)
				} else {
					rejected.Add(1)
				}
				if i%50 == 0 {
					clk.Advance(time.Millisecond)
				}
				if i%500 == 0 {
					s := b.Snapshot()
					assert.LessOrEqual(t, s.BufferedCalls, 20)
					assert.LessOrEqual(t, s.FailedCalls, s.BufferedCalls)
				}
			}
		})
	}
	wg.Wait()

	assert.Equal(t, int64(goroutines*perG), admitted.Load()+rejected.Load())
	assert.Positive(t, rejected.Load(), "the breaker opened at some point")

	trs := rec.transitions()
	require.Greater(t, len(trs), 3)
	t.Logf("%d transitions, %d rejections", len(trs), rejected.Load())
	prev := "closed"
	for _, tr := range rec.all() {
		if tr.Kind != cb.EventTransition {
			continue
		}
		require.Equal(t, prev, tr.Attr("from").String(), "transitions chain in order: %v", trs)
		prev = tr.Attr("to").String()
	}
	require.Equal(t, prev, b.State())
	s := b.Snapshot()
	assert.LessOrEqual(t, s.BufferedCalls, 20)
}

func isOpen(err error) bool {
	_, ok := err.(*cb.OpenError)
	return ok
}

// SPEC: half-open admits exactly PermittedInHalfOpen calls however many arrive at once.
func TestConcurrentHalfOpenAdmitsExactlyTheTrials(t *testing.T) {
	f := openedBreaker(t, 3)
	f.clk.Advance(10 * time.Second)

	release := make(chan struct{})
	var entered atomic.Int32
	call := cb.DecorateFunc(f.b, func(context.Context, int) (int, error) {
		entered.Add(1)
		<-release
		return 0, nil
	})
	const n = 50
	var rejected atomic.Int32
	var all sync.WaitGroup
	for range n {
		all.Go(func() {
			if _, err := call(context.Background(), 0); err != nil {
				assert.ErrorIs(t, err, cb.ErrOpen)
				rejected.Add(1)
			}
		})
	}
	// Wait until every call has either entered or been rejected.
	for entered.Load()+rejected.Load() < n {
		runtime.Gosched()
	}
	assert.Equal(t, int32(3), entered.Load())
	assert.Equal(t, int32(n-3), rejected.Load())
	assert.Equal(t, n-3, f.b.Snapshot().NotPermittedCalls)
	close(release)
	all.Wait()
	require.Equal(t, cb.Closed, f.state())
}

// A trial that has completed keeps its slot until every trial is done: with 2 trials, one
// done and one running, a third call is rejected.
func TestHalfOpenCompletedTrialKeepsItsSlot(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(2))
	_, c := a.start()
	c("", errBoom)
	a.clk.Advance(time.Second)

	_, first := a.start()
	first("ok", nil)
	_, second := a.start()
	require.NotNil(t, second)
	rejected, third := a.start()
	require.Nil(t, third, "one trial done and one running take both slots")
	_, err := rejected.Await(context.Background())
	var oe *cb.OpenError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, cb.HalfOpen, oe.State())
	second("ok", nil)
	require.Equal(t, cb.Closed, a.state())
}

// Transition events reach the listener in the order of the transitions, even when the
// listener of the first is still running when the second happens.
func TestTransitionEventsOrderedUnderContention(t *testing.T) {
	clk := clock.NewManual()
	var (
		mu       sync.Mutex
		got      []string
		entered  = make(chan struct{})
		release  = make(chan struct{})
		blocking = true
	)
	b, err := cb.New(cb.WithClock(clk), cb.SlidingWindowSize(1), cb.OnEvent(func(e policy.Event) {
		mu.Lock()
		block := blocking
		blocking = false
		mu.Unlock()
		if block {
			close(entered)
			<-release
		}
		mu.Lock()
		got = append(got, e.Attr("from").String()+"→"+e.Attr("to").String())
		mu.Unlock()
	}))
	require.NoError(t, err)
	call := cb.DecorateFunc(b, failFunc)

	var wg sync.WaitGroup
	wg.Go(func() { _, _ = call(context.Background(), 0) }) // closed→open; its listener blocks
	<-entered
	wg.Go(func() { _ = b.TransitionTo(cb.ForcedOpen) }) // open→forced-open must wait for the first event
	assert.Never(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	}, 50*time.Millisecond, time.Millisecond, "the second event overtook the first")
	close(release)
	wg.Wait()
	assert.Equal(t, []string{"closed→open", "open→forced-open"}, got)
}

// Decorate guards functions of an argument, sync and async, as package resilience
// composes the breaker: one breaker counts the outcomes of both.
func TestDecorateGuardsBothShapes(t *testing.T) {
	b, err := cb.New(cb.WithClock(clock.NewManual()), cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	require.NoError(t, err)
	call := cb.Decorate[decorate.Func[string, int], string, int](b, func(_ context.Context, s string) (int, error) {
		return len(s), errBoom
	})
	acall := cb.Decorate[decorate.AsyncFunc[string, int], string, int](b, func(_ context.Context, s string) *async.Future[int] {
		return async.Failed[int](errBoom)
	})
	n, err := call(context.Background(), "abc")
	assert.Equal(t, 3, n)
	assert.ErrorIs(t, err, errBoom)
	_, err = acall(context.Background(), "abc").Await(context.Background())
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, cb.Open, b.Snapshot().State, "2 failures of 2")
	_, err = call(context.Background(), "abc")
	assert.ErrorIs(t, err, cb.ErrOpen)
	_, err = acall(context.Background(), "abc").Await(context.Background())
	assert.ErrorIs(t, err, cb.ErrOpen)
}
