package circuitbreaker

import (
	"context"
	"errors"
	"math/rand/v2"
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
)

// These tests cover the clean flag: while a count-based window is full of fast successes,
// recording one more fast success takes no lock and writes nothing (record's fast path).

var (
	errCleanBoom    = errors.New("boom")
	errCleanIgnored = errors.New("ignored")
)

// cleanStep is what the test function does: sleep on the manual clock, then return err.
type cleanStep struct {
	sleep time.Duration
	err   error
}

type cleanFixture struct {
	t    *testing.T
	clk  *clock.Manual
	b    *Breaker
	call decorate.Func[cleanStep, int]
}

func newCleanFixture(t *testing.T, opts ...Option) *cleanFixture {
	t.Helper()
	clk := clock.NewManual()
	b, err := New(append([]Option{WithClock(clk), SlowCallThreshold(time.Second), IgnoreOn(errCleanIgnored)},
		opts...)...)
	require.NoError(t, err)
	f := &cleanFixture{t: t, clk: clk, b: b}
	f.call = DecorateFunc(b, func(ctx context.Context, s cleanStep) (int, error) {
		if s.sleep > 0 {
			require.NoError(t, clk.Sleep(ctx, s.sleep))
		}
		return 0, s.err
	})
	return f
}

func (f *cleanFixture) do(steps ...cleanStep) {
	f.t.Helper()
	for _, s := range steps {
		_, err := f.call(context.Background(), s)
		require.Equal(f.t, s.err, err, "call rejected in state %v", f.b.State())
	}
}

func (f *cleanFixture) oks(n int) {
	f.t.Helper()
	for range n {
		f.do(cleanStep{})
	}
}

// checkClean checks, under the mutex, that the flag says what the state and window say.
func checkClean(t testing.TB, b *Breaker) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	want := b.State() == Closed && b.win.clean()
	assert.Equal(t, want, b.clean.Load(), "clean flag: state %v, window %+v", b.State(), b.win.total)
}

func (f *cleanFixture) counts() counts {
	s := f.b.Snapshot()
	return counts{calls: s.BufferedCalls, failed: s.FailedCalls, slow: s.SlowCalls}
}

func TestCleanFlagFollowsTheWindow(t *testing.T) {
	f := newCleanFixture(t, SlidingWindowSize(3), MinimumCalls(3))
	f.oks(2)
	assert.False(t, f.b.clean.Load(), "not full")
	f.oks(1)
	assert.True(t, f.b.clean.Load(), "full of fast successes")
	checkClean(t, f.b)

	f.oks(5) // fast path: nothing changes
	assert.Equal(t, counts{calls: 3}, f.counts())
	assert.True(t, f.b.clean.Load())

	f.do(cleanStep{err: errCleanIgnored}) // ignored: nothing
	assert.True(t, f.b.clean.Load())

	f.do(cleanStep{sleep: time.Second + 1}) // a slow success
	assert.False(t, f.b.clean.Load())
	assert.Equal(t, counts{calls: 3, slow: 1}, f.counts())
	checkClean(t, f.b)

	// The slow call leaves the window after exactly 3 more calls, although the fast path
	// does not move the ring's head: every slot of a clean ring holds the same outcome.
	f.oks(2)
	assert.Equal(t, counts{calls: 3, slow: 1}, f.counts())
	f.oks(1)
	assert.Equal(t, counts{calls: 3}, f.counts())
	assert.True(t, f.b.clean.Load())

	f.do(cleanStep{err: errCleanBoom}) // 1 of 3 < 50%
	assert.False(t, f.b.clean.Load())
	assert.Equal(t, counts{calls: 3, failed: 1}, f.counts())
	f.oks(2)
	assert.Equal(t, counts{calls: 3, failed: 1}, f.counts())
	f.oks(1)
	assert.True(t, f.b.clean.Load())

	_ = f.b.TransitionTo(ForcedOpen)
	assert.False(t, f.b.clean.Load(), "every transition clears the flag")
	f.b.Reset()
	assert.False(t, f.b.clean.Load(), "a new window is empty")
	checkClean(t, f.b)
	f.oks(3)
	assert.True(t, f.b.clean.Load())
	f.b.Reset() // closed to closed: a new window too
	assert.False(t, f.b.clean.Load())
	assert.Equal(t, counts{}, f.counts())
}

func TestCleanFlagNeverSetForTimeWindowOrHalfOpen(t *testing.T) {
	f := newCleanFixture(t, SlidingWindowType(TimeBased), SlidingWindowSize(2), MinimumCalls(1))
	f.oks(10)
	assert.False(t, f.b.clean.Load())
	assert.Equal(t, counts{calls: 10}, f.counts(), "a time window counts every success")

	g := newCleanFixture(t, SlidingWindowSize(1), WaitInOpen(time.Second), PermittedInHalfOpen(3))
	g.do(cleanStep{err: errCleanBoom})
	require.Equal(t, Open, g.b.State())
	g.clk.Advance(time.Second)
	g.oks(2)
	require.Equal(t, HalfOpen, g.b.State())
	assert.False(t, g.b.clean.Load())
	assert.Equal(t, counts{calls: 2}, g.counts(), "trials are counted one by one")
	g.oks(1)
	require.Equal(t, Closed, g.b.State())
	assert.False(t, g.b.clean.Load(), "closed again with an empty window")
	g.oks(1)
	assert.True(t, g.b.clean.Load())
}

// A success admitted before the window was clean, completing once it is, changes nothing;
// completing after a failure made the window unclean, it is recorded in full.
func TestCleanFlagAndCallsInFlight(t *testing.T) {
	f := newCleanFixture(t, SlidingWindowSize(3), MinimumCalls(3))
	var completes []func(int, error)
	acall := DecorateAsyncFunc(f.b, func(context.Context, int) *async.Future[int] {
		fut, complete := async.NewPromise[int]()
		completes = append(completes, complete)
		return fut
	})
	start := func() func(int, error) {
		t.Helper()
		_ = acall(context.Background(), 0)
		return completes[len(completes)-1]
	}

	f.oks(3)
	a := start()
	f.do(cleanStep{err: errCleanBoom}) // window fail, ok, ok (in ring order)
	require.False(t, f.b.clean.Load())
	a(1, nil) // recorded under the mutex: it evicts the oldest ok
	assert.Equal(t, counts{calls: 3, failed: 1}, f.counts())
	f.oks(1)
	assert.Equal(t, counts{calls: 3, failed: 1}, f.counts())
	f.oks(1) // the failure was recorded 3 calls ago: it leaves now
	assert.Equal(t, counts{calls: 3}, f.counts())
	require.True(t, f.b.clean.Load())

	// A call admitted in an earlier generation is not recorded, even once the new window
	// is clean again; its failure reaches the mutex and is dropped there.
	b := start()
	f.b.Reset()
	f.oks(3)
	require.True(t, f.b.clean.Load())
	b(0, errCleanBoom)
	assert.Equal(t, counts{calls: 3}, f.counts())
	assert.True(t, f.b.clean.Load())
	require.Equal(t, Closed, f.b.State())

	// Its success is not recorded either (it changes nothing, whichever way it goes).
	c := start()
	_ = f.b.TransitionTo(ForcedOpen)
	f.b.Reset()
	c(1, nil)
	assert.Equal(t, counts{}, f.counts())
	checkClean(t, f.b)
}

// The breaker's count-based window, with the fast path, agrees with a naive model of the
// spec: the last n outcomes, opening once at least MinimumCalls of them reach a threshold.
func TestCountWindowThroughBreakerMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, size := range []int{1, 2, 3, 5, 10} {
		minCalls := max(size-1, 1)
		f := newCleanFixture(t, SlidingWindowSize(size), MinimumCalls(minCalls), FailureRateThreshold(40),
			SlowCallRateThreshold(60), WaitInOpen(time.Hour))
		var naive []outcome
		fastPaths, opens := 0, 0
		for i := range 4000 {
			var s cleanStep
			var o outcome
			ignored := false
			switch r := rng.IntN(100); {
			case r < 4:
				s.err, o = errCleanBoom, failedBit
			case r < 7:
				s.sleep, o = time.Second+1, slowBit
			case r < 8:
				s.sleep, s.err, o = 2*time.Second, errCleanBoom, failedBit|slowBit
			case r < 10:
				s.err, ignored = errCleanIgnored, true
			}
			if o == 0 && !ignored && f.b.clean.Load() {
				fastPaths++
			}
			f.do(s)
			if !ignored {
				naive = append(naive, o)
				if len(naive) > size {
					naive = naive[1:]
				}
			}
			var want counts
			for _, n := range naive {
				want.add(n)
			}
			require.Equal(t, want, f.counts(), "size %d, step %d", size, i)
			shouldOpen := want.calls >= minCalls && f.b.cur.Load().exceeded(want)
			if shouldOpen {
				opens++
				require.Equal(t, Open, f.b.State(), "size %d, step %d", size, i)
				f.b.Reset()
				naive = naive[:0]
			} else {
				require.Equal(t, Closed, f.b.State(), "size %d, step %d", size, i)
			}
			checkClean(t, f.b)
		}
		assert.Positive(t, fastPaths, "size %d: the fast path was taken", size)
		assert.Positive(t, opens, "size %d: the breaker opened", size)
	}
}

// Many goroutines on a count-based breaker that is mostly clean, with failures, slow calls,
// and transitions by hand: the flag always agrees with the window, snapshots add up,
// transitions chain, and the ring is exact once the calls are over.
func TestConcurrentCleanWindowStress(t *testing.T) {
	const size = 16
	clk := clock.NewManual()
	var (
		mu   sync.Mutex
		trs  []policy.Event
		stop atomic.Bool
	)
	b, err := New(WithClock(clk), SlidingWindowSize(size), MinimumCalls(size), FailureRateThreshold(25),
		SlowCallThreshold(time.Second), SlowCallRateThreshold(25), WaitInOpen(time.Millisecond),
		PermittedInHalfOpen(2), OnEvent(func(e policy.Event) {
			if e.Kind == EventTransition {
				mu.Lock()
				trs = append(trs, e)
				mu.Unlock()
			}
		}))
	require.NoError(t, err)
	call := DecorateFunc(b, func(ctx context.Context, r int) (int, error) {
		switch {
		case r < 5: // 5% failures: a window of 16 is often clean, and sometimes opens
			return r, errCleanBoom
		case r < 6:
			return r, errCleanIgnored
		}
		return r, nil
	})
	slowCall := DecorateFunc(b, func(ctx context.Context, _ int) (int, error) {
		clk.Advance(2 * time.Second) // slow for itself, and maybe for calls in flight
		return 0, nil
	})

	var checkers, callers sync.WaitGroup
	var cleanSeen atomic.Int64
	checkers.Go(func() {
		for !stop.Load() {
			checkClean(t, b)
			s := b.Snapshot()
			assert.LessOrEqual(t, s.BufferedCalls, size)
			assert.LessOrEqual(t, s.FailedCalls, s.BufferedCalls)
			assert.LessOrEqual(t, s.SlowCalls, s.BufferedCalls)
			assert.GreaterOrEqual(t, s.FailedCalls, 0)
			assert.GreaterOrEqual(t, s.SlowCalls, 0)
		}
	})
	for g := range 8 {
		callers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 5000 {
				switch {
				case g == 0 && i%1200 == 0:
					_ = b.TransitionTo(ForcedOpen)
					b.Reset()
				case g == 1 && i%301 == 0:
					_, _ = slowCall(context.Background(), 0)
				case i%40 == 0:
					clk.Advance(time.Millisecond)
				}
				if b.clean.Load() {
					cleanSeen.Add(1)
				}
				_, _ = call(context.Background(), rng.IntN(100))
			}
		})
	}
	callers.Wait()
	stop.Store(true)
	checkers.Wait()

	requireTransitionsChain(t, &mu, &trs, b)
	t.Logf("%d transitions; %d calls found the window clean", len(trs), cleanSeen.Load())
	assert.Positive(t, cleanSeen.Load(), "the window was clean at times")

	// Whatever the calls left, the ring is exact: a failure leaves after exactly size calls.
	b.Reset()
	f := &cleanFixture{t: t, clk: clk, b: b, call: DecorateFunc(b, func(_ context.Context, s cleanStep) (int, error) {
		return 0, s.err
	})}
	f.oks(size)
	require.True(t, b.clean.Load())
	f.do(cleanStep{err: errCleanBoom})
	f.oks(size - 1)
	assert.Equal(t, counts{calls: size, failed: 1}, f.counts())
	f.oks(1)
	assert.Equal(t, counts{calls: size}, f.counts())
	checkClean(t, b)
}

// requireTransitionsChain requires the transitions recorded in trs (under mu) to chain in
// order from closed and to end in b's state.
func requireTransitionsChain(t *testing.T, mu *sync.Mutex, trs *[]policy.Event, b *Breaker) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	prev := "closed"
	for _, e := range *trs {
		require.Equal(t, prev, e.Attr(attrFrom).String(), "transitions chain in order")
		prev = e.Attr(attrTo).String()
	}
	require.Equal(t, prev, b.State())
}
