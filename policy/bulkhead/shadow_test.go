package bulkhead_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// shadowRun is a bulkhead under test, its decorated call, and the calls in flight that it
// ran, by number.
type shadowRun struct {
	b        *bulkhead.Bulkhead
	pending  map[int]func(int, error)
	refused  int
	events   int
	shadowed int
}

func newShadowRun(t *testing.T, shadow bool) *shadowRun {
	r := &shadowRun{pending: map[int]func(int, error){}}
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(4), bulkhead.PriorityReserve(0.5), bulkhead.Shadow(shadow),
		bulkhead.OnEvent(func(e policy.Event) {
			if e.Kind != bulkhead.EventRejected {
				return
			}
			if e.Attr("shadow").Any() == true {
				r.shadowed++
			} else {
				r.events++
			}
		}))
	r.b = b
	return r
}

// start makes call number id, of priority p, which stays in flight until complete.
func (r *shadowRun) start(t *testing.T, id int, p policy.Priority) {
	f := bulkhead.NewPolicy[int](r.b).DecorateAsync(func(context.Context) *async.Future[int] {
		fut, complete := async.NewPromise[int]()
		r.pending[id] = complete
		return fut
	})(policy.WithPriority(context.Background(), p))
	if _, done, err := f.Result(); done {
		require.ErrorIs(t, err, bulkhead.ErrFull)
		r.refused++
	}
}

func (r *shadowRun) complete(id int) {
	if c, ok := r.pending[id]; ok {
		c(id, nil)
		delete(r.pending, id)
	}
}

// SPEC SH-1, SH-2: the same random sequence of calls of every priority, which start and
// complete in a random order, through a bulkhead with and without shadow mode: in shadow
// mode every call runs, ShadowRejected and the events marked shadow count exactly the
// rejections of the other, and the state (Snapshot: free slots, shed calls) is the same
// after every step.
func TestSH1_BulkheadShadowRejectsNothingAndCountsWhatItWouldHave(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		off, on := newShadowRun(t, false), newShadowRun(t, true)
		for id := range 400 {
			if rng.IntN(2) == 0 || len(off.pending) == 0 {
				p := policy.Priority(rng.IntN(4))
				off.start(t, id, p)
				on.start(t, id, p)
			} else {
				ids := make([]int, 0, len(off.pending))
				for k := range off.pending {
					ids = append(ids, k)
				}
				pick := ids[rng.IntN(len(ids))]
				for k := range on.pending { // a call let through in shadow mode holds nothing
					if _, held := off.pending[k]; !held && rng.IntN(2) == 0 {
						on.complete(k)
					}
				}
				off.complete(pick)
				on.complete(pick)
			}
			want := off.b.Snapshot()
			want.ShadowRejected = uint64(off.refused)
			require.Equal(t, want, on.b.Snapshot(), "seed %d, step %d", seed, id)
		}
		require.Positive(t, off.refused)
		assert.Zero(t, on.refused, "shadow mode rejects nothing")
		assert.Equal(t, off.refused, off.events)
		assert.Equal(t, off.refused, on.shadowed)
		assert.Zero(t, on.events)
		assert.Positive(t, on.b.Snapshot().Shed[policy.PrioritySheddable], "would-be shed calls are counted as shed")
	}
}

// SPEC SH-3, SH-5: a synchronous call that finds no slot runs, holding none, and nothing
// waits, whatever MaxWait is; the call is recorded as admitted; the event carries the
// attributes priority, shed and shadow.
func TestSH3_BulkheadShadowSyncCall(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(1e9), bulkhead.Shadow(true))
	ran := 0
	var call func(ctx context.Context) (int, error)
	depth, free := 0, 0
	call = bulkhead.NewPolicy[int](b).Decorate(func(ctx context.Context) (int, error) {
		ran++
		depth++
		if depth < 4 { // nested calls hold the outer ones' slots
			return call(ctx)
		}
		free = b.Snapshot().AvailableSlots
		assert.Zero(t, b.Snapshot().Waiting)
		return 0, nil
	})
	_, err := call(policy.WithPriority(context.Background(), policy.PrioritySheddable))
	require.NoError(t, err)
	assert.Equal(t, 4, ran)
	assert.Equal(t, 1, free, "one slot taken, the sheddable calls' share")
	assert.Equal(t, uint64(3), b.Snapshot().ShadowRejected, "the last three would have been shed")
	assert.Equal(t, int64(3), b.Snapshot().Shed[policy.PrioritySheddable])
	assert.Equal(t, 2, b.Snapshot().AvailableSlots, "the slots held come back, none more")
	var got []policy.Event
	for _, e := range rec.Events() {
		if e.Kind == bulkhead.EventRejected {
			got = append(got, e)
		}
	}
	require.Len(t, got, 3)
	assert.Equal(t, "sheddable", got[0].Attr("priority").String())
	assert.Equal(t, true, got[0].Attr("shed").Any())
	assert.Equal(t, true, got[0].Attr("shadow").Any())
	assert.Equal(t, true, got[2].Attr("shadow").Any())
	depth = 0
	_, err = call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, uint64(5), b.Snapshot().ShadowRejected, "critical: both slots, then two would-be rejections")
	assert.Zero(t, free)
}

// SPEC SH-4: a reload toggles shadow mode on a running bulkhead, for the calls that
// arrive after it, and names "shadow" in its ConfigChanged event.
func TestSH4_BulkheadShadowChangesLive(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(1))
	fut, complete := async.NewPromise[int]()
	call := bulkhead.NewPolicy[int](b).DecorateAsync(func(context.Context) *async.Future[int] { return fut })
	call(context.Background())
	_, _, err := call(context.Background()).Result()
	require.ErrorIs(t, err, bulkhead.ErrFull)
	cfg := b.Config()
	cfg.Shadow = true
	require.NoError(t, b.Reconfigure(cfg))
	_, done, _ := call(context.Background()).Result()
	assert.False(t, done, "runs")
	assert.Equal(t, uint64(1), b.Snapshot().ShadowRejected)
	cfg.Shadow = false
	require.NoError(t, b.Reconfigure(cfg))
	_, _, err = call(context.Background()).Result()
	require.ErrorIs(t, err, bulkhead.ErrFull)
	complete(1, nil)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	var changed [][]string
	for _, e := range rec.Events() {
		if e.Kind == policy.ConfigChanged {
			changed = append(changed, e.Changed)
		}
	}
	assert.Equal(t, [][]string{{"shadow"}, {"shadow"}}, changed)
}

// SPEC SH-4, SH-2: synchronous and asynchronous calls of every priority, with and
// without MaxWait, while shadow mode is switched on and off as fast as a goroutine can:
// each slot taken is given back once, and none that was not taken, so that every slot
// is free and nobody waits at the end (run with -race).
func TestSH4_BulkheadShadowToggledDuringCalls(t *testing.T) {
	for _, mw := range []time.Duration{0, time.Millisecond} {
		b, err := bulkhead.New(bulkhead.MaxConcurrent(3), bulkhead.MaxWait(mw), bulkhead.PriorityReserve(0.5))
		require.NoError(t, err)
		syncCall := bulkhead.NewPolicy[int](b).Decorate(func(context.Context) (int, error) { return 1, nil })
		asyncF := bulkhead.NewPolicy[int](b).DecorateAsync(func(context.Context) *async.Future[int] {
			f, c := async.NewPromise[int]()
			go c(1, nil)
			return f
		})
		var wg sync.WaitGroup
		stop := make(chan struct{})
		go func() {
			on := false
			for {
				select {
				case <-stop:
					return
				default:
				}
				on = !on
				cfg := b.Config()
				cfg.Shadow = on
				_ = b.Reconfigure(cfg)
			}
		}()
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := policy.WithPriority(context.Background(), policy.Priority(g%4))
				for range 2000 {
					if g%2 == 0 {
						_, _ = syncCall(ctx)
					} else {
						_, _ = asyncF(ctx).Await(context.Background())
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		s := b.Snapshot()
		assert.Equal(t, 3, s.AvailableSlots, "%+v", s)
		assert.Zero(t, s.Waiting)
	}
}

// SPEC SH-8: a call let through in shadow mode, with a listener, allocates nothing.
func TestSH8_BulkheadShadowAllocatesNothing(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.Shadow(true), bulkhead.OnEvent(func(policy.Event) {}))
	inner := bulkhead.NewPolicy[int](b).Decorate(func(context.Context) (int, error) { return 0, nil })
	ctx := context.Background()
	var allocs float64
	call := bulkhead.NewPolicy[int](b).Decorate(func(context.Context) (int, error) {
		allocs = testing.AllocsPerRun(100, func() { _, _ = inner(ctx) })
		return 0, nil
	})
	_, _ = call(ctx)
	assert.Zero(t, allocs)
	assert.Positive(t, b.Snapshot().ShadowRejected)
}
