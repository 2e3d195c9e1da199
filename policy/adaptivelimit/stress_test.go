package adaptivelimit_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// limitLog is the list of limits the limiter has published, in order.
type limitLog struct {
	mu     sync.Mutex
	limits []int
}

func (g *limitLog) listen(e policy.Event) {
	if e.Kind == adaptivelimit.EventChanged {
		g.mu.Lock()
		g.limits = append(g.limits, int(e.Attr("limit").Int64()))
		g.mu.Unlock()
	}
}

func (g *limitLog) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.limits)
}

// ceiling returns the largest of floor and the limits published from index from on.
func (g *limitLog) ceiling(from, floor int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, lim := range g.limits[from:] {
		floor = max(floor, lim)
	}
	return floor
}

// SPEC AL-18: 50 goroutines make synchronous and asynchronous calls on the system clock,
// with MaxWait > 0, random drops and random cancellations (contexts that end before,
// during or after the wait, futures canceled), under a limit that moves (AIMD between 2
// and 8). Inside the function, the calls running never exceed the limit that was current
// when the call was let in. The test cannot read that limit, so it checks a bound that
// holds it: the largest of the limit read before the call was made, the limit now, and
// the limits published in between. (The limit is stored, then published, under the
// algorithm's lock: a limit stored while the call was made is either published by the
// time the function reads the events, or still the limit when it read the limit just
// before.) At the end nothing is in flight, nothing is queued, and no goroutine is left
// (TestMain).
func TestStressNoLeaks(t *testing.T) {
	const goroutines, perG = 50, 100
	errDrop := errors.New("overloaded")
	log := &limitLog{}
	l, err := adaptivelimit.New(adaptivelimit.UseAlgorithm(adaptivelimit.AIMD), adaptivelimit.MinLimit(2),
		adaptivelimit.MaxLimit(8), adaptivelimit.InitialLimit(5), adaptivelimit.BackoffRatio(0.5),
		adaptivelimit.LatencyThreshold(time.Second), adaptivelimit.MaxWait(20*time.Millisecond),
		adaptivelimit.DropOn(errDrop), adaptivelimit.OnEvent(log.listen))
	require.NoError(t, err)

	var running, maxRunning, admitted, violations atomic.Int64
	var helpers sync.WaitGroup // the goroutines that complete the async calls
	// enter counts a call running, for a call made after the first from events were
	// published and when the limit was limit.
	enter := func(from, limit int) {
		n := running.Add(1)
		now := l.Limit() // read before the events
		bound := log.ceiling(from, max(limit, now))
		for m := maxRunning.Load(); n > m && !maxRunning.CompareAndSwap(m, n); m = maxRunning.Load() {
		}
		admitted.Add(1)
		if n > int64(bound) {
			violations.Add(1)
			t.Errorf("%d calls running, above every limit since the call was made (%d)", n, bound)
		}
	}
	outcome := func(r *rand.Rand) error {
		if r.IntN(4) == 0 {
			return errDrop
		}
		return nil
	}
	type args struct {
		from, limit int
		r           *rand.Rand
	}
	syncCall := adaptivelimit.DecorateFunc(l, func(ctx context.Context, a args) (int, error) {
		enter(a.from, a.limit)
		for range a.r.IntN(3) {
			runtime.Gosched()
		}
		running.Add(-1)
		return 0, outcome(a.r)
	})
	asyncCall := adaptivelimit.DecorateAsyncFunc(l, func(ctx context.Context, a args) *async.Future[int] {
		enter(a.from, a.limit)
		f, complete := async.NewPromise[int]()
		// Registered before the limiter's own callback: the call stops running before it
		// counts out, also when its future is canceled.
		f.OnComplete(func(int, error) { running.Add(-1) })
		err := outcome(a.r)
		helpers.Go(func() {
			runtime.Gosched()
			complete(0, err)
		})
		return f
	})

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range perG {
				ctx, cancel := context.WithCancel(context.Background())
				var timer *time.Timer
				switch r.IntN(8) {
				case 0:
					cancel() // over on arrival
				case 1:
					timer = time.AfterFunc(time.Duration(r.IntN(200))*time.Microsecond, cancel)
				}
				a := args{from: log.len(), r: rand.New(rand.NewPCG(r.Uint64(), 1))}
				a.limit = l.Limit()
				if r.IntN(2) == 0 {
					_, err := syncCall(ctx, a)
					if err != nil && !errors.Is(err, adaptivelimit.ErrLimitExceeded) && !errors.Is(err, errDrop) {
						t.Errorf("sync: %v", err)
					}
				} else {
					f := asyncCall(ctx, a)
					if r.IntN(4) == 0 {
						for range r.IntN(3) {
							runtime.Gosched()
						}
						f.Cancel()
					}
					_, err := f.Await(context.Background())
					if err != nil && !errors.Is(err, adaptivelimit.ErrLimitExceeded) && !errors.Is(err, errDrop) &&
						!errors.Is(err, async.ErrCanceled) {
						t.Errorf("async: %v", err)
					}
				}
				if timer != nil {
					timer.Stop()
				}
				cancel()
			}
		})
	}
	wg.Wait()
	helpers.Wait() // a helper may still be starting a call it let in from the queue

	assert.Zero(t, violations.Load())
	assert.Zero(t, running.Load())
	assert.Zero(t, l.InFlight(), "nothing in flight at the end")
	assert.Zero(t, l.Queued(), "nothing queued at the end")
	assert.Positive(t, admitted.Load())
	assert.LessOrEqual(t, maxRunning.Load(), int64(8))
	assert.Positive(t, log.len(), "the limit moved")
	t.Logf("%d calls ran, at most %d at once; the limit changed %d times", admitted.Load(), maxRunning.Load(), log.len())
}
