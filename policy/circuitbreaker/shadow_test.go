package circuitbreaker_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// shadowRun is a breaker under test on a manual clock, its decorated call, and the calls
// in flight that it ran, by number.
type shadowRun struct {
	clk      *clock.Manual
	b        *cb.Breaker
	call     func(ctx context.Context) *async.Future[int]
	pending  map[int]func(int, error)
	refused  int
	shadowed int
	events   int
	next     int
}

func newShadowRun(t *testing.T, shadow bool) *shadowRun {
	r := &shadowRun{clk: clock.NewManual(), pending: map[int]func(int, error){}}
	b, err := cb.New(cb.WithClock(r.clk), cb.Name("svc"), cb.SlidingWindowSize(8), cb.MinimumCalls(4),
		cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(2), cb.MaxWaitInHalfOpen(3*time.Second),
		cb.Shadow(shadow), cb.OnEvent(func(e policy.Event) {
			switch {
			case e.Kind != cb.EventRejected:
			case e.Attr("shadow").Any() == true:
				r.shadowed++
			default:
				r.events++
			}
		}))
	require.NoError(t, err)
	r.b = b
	r.call = cb.NewPolicy[int](b).DecorateAsync(func(context.Context) *async.Future[int] {
		fut, complete := async.NewPromise[int]()
		r.pending[r.next] = complete
		return fut
	})
	return r
}

func (r *shadowRun) start(t *testing.T, id int) {
	r.next = id
	if _, done, err := r.call(context.Background()).Result(); done {
		require.ErrorIs(t, err, cb.ErrOpen)
		r.refused++
	}
}

func (r *shadowRun) complete(id int, err error) {
	if c, ok := r.pending[id]; ok {
		c(id, err)
		delete(r.pending, id)
	}
}

// SPEC SH-1, SH-2: the same random sequence of calls, which start, fail or succeed and
// complete in a random order while the clock moves, through a breaker with and without
// shadow mode: in shadow mode every call runs, ShadowRejected and the events marked
// shadow count exactly the rejections of the other, and its state (Snapshot: state,
// window, trials, NotPermittedCalls) is the same after every step, the calls let through
// in shadow mode counting in none of it.
func TestSH1_BreakerShadowRejectsNothingAndCountsWhatItWouldHave(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 5))
		off, on := newShadowRun(t, false), newShadowRun(t, true)
		states := map[string]bool{}
		for id := range 500 {
			switch k := rng.IntN(10); {
			case k < 2:
				d := time.Duration(rng.IntN(1500)) * time.Millisecond
				off.clk.Advance(d)
				on.clk.Advance(d)
			case k < 6 || len(off.pending) == 0:
				off.start(t, id)
				on.start(t, id)
			default:
				var ids []int
				for k := range off.pending {
					ids = append(ids, k)
				}
				pick := ids[rng.IntN(len(ids))]
				var err error
				if rng.IntN(3) == 0 {
					err = errBoom
				}
				for k := range on.pending { // a call let through in shadow mode counts in nothing
					if _, held := off.pending[k]; !held && rng.IntN(2) == 0 {
						on.complete(k, errBoom)
					}
				}
				off.complete(pick, err)
				on.complete(pick, err)
			}
			want := off.b.Snapshot()
			want.ShadowRejected = uint64(off.refused)
			require.Equal(t, want, on.b.Snapshot(), "seed %d, step %d", seed, id)
			states[want.State] = true
		}
		require.Positive(t, off.refused)
		assert.Zero(t, on.refused, "shadow mode rejects nothing")
		assert.Equal(t, off.refused, off.events)
		assert.Equal(t, off.refused, on.shadowed)
		assert.Zero(t, on.events)
		assert.True(t, states["open"] && states["half-open"], "seed %d: %v", seed, states)
	}
}

// SPEC SH-4, SH-5: shadow mode is changed live by a reload, named in the ConfigChanged
// event; a call let through in shadow mode is recorded as what happened (a failure here),
// with its latency, and its event carries the attribute shadow.
func TestSH5_BreakerShadowRecordsWhatHappened(t *testing.T) {
	o := newObserved(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	var events []policy.Event
	_, _ = o.call(context.Background(), step{err: errBoom})
	_, _ = o.call(context.Background(), step{err: errBoom})
	require.Equal(t, cb.Open, o.b.State())
	cfg := o.b.Config()
	cfg.Shadow = true
	require.NoError(t, o.b.Reconfigure(cfg))
	_, err := o.call(context.Background(), slow(20*time.Millisecond, errBoom))
	require.ErrorIs(t, err, errBoom, "it ran")
	assert.Equal(t, uint64(1), o.b.Snapshot().ShadowRejected)
	assert.Equal(t, cb.Open, o.b.State())
	got := o.rec.Outcomes()
	require.Len(t, got, 3)
	assert.Equal(t, observe.ResultFailed, got[2].Result)
	assert.ErrorIs(t, got[2].Err, errBoom)
	for _, e := range o.rec.Events() {
		if e.Kind == cb.EventRejected || e.Kind == policy.ConfigChanged {
			events = append(events, e)
		}
	}
	require.Len(t, events, 2)
	assert.Equal(t, []string{"shadow"}, events[0].Changed)
	assert.Equal(t, true, events[1].Attr("shadow").Any())
	assert.Equal(t, time.Second*60, events[1].RetryAfter)

	cfg.Shadow = false
	require.NoError(t, o.b.Reconfigure(cfg))
	_, err = o.call(context.Background(), ok)
	require.ErrorIs(t, err, cb.ErrOpen)
}

// SPEC SH-8: a call an open breaker in shadow mode lets through, with a listener,
// allocates nothing.
func TestSH8_BreakerShadowAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	b, err := cb.New(cb.WithClock(clk), cb.SlidingWindowSize(2), cb.MinimumCalls(2), cb.Shadow(true),
		cb.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	call := cb.NewPolicy[int](b).Decorate(func(context.Context) (int, error) { return 0, errBoom })
	_, _ = call(context.Background())
	_, _ = call(context.Background())
	require.Equal(t, cb.Open, b.State())
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = call(ctx) }))
	assert.Equal(t, uint64(101), b.Snapshot().ShadowRejected)
	assert.Equal(t, cb.Open, b.State())
}

// SPEC SH-7: a breaker forced open rejects in shadow mode too, and counts no shadowed
// rejection; back to closed, it lets calls through as before.
func TestSH7_ForcedOpenRejectsInShadowMode(t *testing.T) {
	r := newShadowRun(t, true)
	require.NoError(t, r.b.TransitionTo(cb.ForcedOpen))
	for i := range 3 {
		_, done, err := r.call(context.Background()).Result()
		require.True(t, done, "call %d", i)
		require.ErrorIs(t, err, cb.ErrOpen)
	}
	assert.Equal(t, 3, r.events)
	assert.Zero(t, r.shadowed)
	assert.Zero(t, r.b.Snapshot().ShadowRejected)
	require.NoError(t, r.b.TransitionTo(cb.Closed))
	_, done, _ := r.call(context.Background()).Result()
	assert.False(t, done, "closed again: the call runs")
}
