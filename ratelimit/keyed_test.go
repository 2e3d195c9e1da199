package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

func newKeyed[K comparable](t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *ratelimit.Keyed[K] {
	t.Helper()
	k, err := ratelimit.NewKeyed[K](append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.WithInstanceID("keyed")}, opts...)...)
	require.NoError(t, err)
	return k
}

// keyedAdmitted counts how many TryAcquire calls for key pass in a row at the current instant.
func keyedAdmitted[K comparable](k *ratelimit.Keyed[K], key K, atMost int) int {
	n := 0
	for n < atMost && k.TryAcquire(key) {
		n++
	}
	return n
}

// SPEC RL-3, RL-4, RL-6 per key: the seed's scenario for one client leaves another
// client's quota untouched.
func TestKeyed_RL3_SeedScenarioPerKey(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))

	assert.Equal(t, 10, keyedAdmitted(k, "alice", 100), "alice's burst")
	assert.False(t, k.TryAcquire("alice"), "alice's 11th call")
	assert.Equal(t, 10, keyedAdmitted(k, "bob", 100), "bob is unaffected by alice")
	assert.Equal(t, 0, k.AvailablePermits("alice"))
	assert.Equal(t, 10, k.AvailablePermits("carol"), "a key never seen has its full burst")

	clk.Advance(100 * time.Millisecond)
	assert.True(t, k.TryAcquire("alice"), "one permit every 1s/10")
	assert.False(t, k.TryAcquire("alice"), "and only one")
	assert.Equal(t, 2, k.Len())
}

// SPEC RL-9b: Decide reports what the HTTP rate-limit headers carry.
func TestKeyed_RL9b_DecideReportsQuota(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))

	d := k.Decide("alice")
	assert.Equal(t, ratelimit.Decision{Admitted: true, Remaining: 9, Reset: 100 * time.Millisecond}, d)
	for range 9 {
		require.True(t, k.Decide("alice").Admitted)
	}
	d = k.Decide("alice")
	assert.Equal(t, ratelimit.Decision{Admitted: false, Remaining: 0, RetryAfter: 100 * time.Millisecond, Reset: time.Second}, d)

	clk.Advance(30 * time.Millisecond)
	d = k.Decide("alice")
	assert.Equal(t, ratelimit.Decision{Admitted: false, Remaining: 0, RetryAfter: 70 * time.Millisecond, Reset: 970 * time.Millisecond}, d)

	// A call made after the retry-after passes (RL-9b).
	clk.Advance(d.RetryAfter)
	d = k.Decide("alice")
	assert.Equal(t, ratelimit.Decision{Admitted: true, Remaining: 0, Reset: time.Second}, d)
}

// The keyed limiter is a Limiter per key: the same random sequence of calls and clock
// moves gives the same outcomes as one Limiter per key, whether idle cells are evicted
// after every step or never. Eviction changes nothing (the issue's "no change in
// behaviour"), and SPEC RL-2…RL-9 hold per key.
func TestKeyed_BehavesAsOneLimiterPerKey_WithOrWithoutEviction(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			clk := clock.NewManual()
			opts := []ratelimit.Option{ratelimit.Permits(3), ratelimit.Period(300 * time.Millisecond),
				ratelimit.MaxWait(150 * time.Millisecond)}
			swept := newKeyed[int](t, clk, opts...)
			kept := newKeyed[int](t, clk, opts...)
			refs := map[int]*ratelimit.Limiter{}
			ref := func(key int) *ratelimit.Limiter {
				if refs[key] == nil {
					refs[key] = newLimiter(t, clk, opts...)
				}
				return refs[key]
			}
			evicted := 0
			for step := range 5000 {
				key := rng.IntN(8)
				switch op := rng.IntN(10); {
				case op < 5:
					want := ref(key).TryAcquire()
					require.Equal(t, want, swept.TryAcquire(key), "step %d TryAcquire(%d), swept", step, key)
					require.Equal(t, want, kept.TryAcquire(key), "step %d TryAcquire(%d), kept", step, key)
				case op < 8:
					wr, werr := ref(key).Reserve()
					sr, serr := swept.Reserve(key)
					kr, kerr := kept.Reserve(key)
					require.Equal(t, werr == nil, serr == nil, "step %d Reserve(%d)", step, key)
					require.Equal(t, werr == nil, kerr == nil, "step %d Reserve(%d)", step, key)
					require.Equal(t, wr.Delay(), sr.Delay(), "step %d Reserve(%d).Delay", step, key)
					require.Equal(t, wr.Delay(), kr.Delay(), "step %d Reserve(%d).Delay", step, key)
					if rng.IntN(2) == 0 { // give it back (RL-9)
						wr.Cancel()
						sr.Cancel()
						kr.Cancel()
					}
				default:
					clk.Advance(time.Duration(rng.IntN(200)) * time.Millisecond)
				}
				for key := range 8 {
					require.Equal(t, ref(key).AvailablePermits(), swept.AvailablePermits(key), "step %d available(%d)", step, key)
				}
				evicted += swept.Sweep()
			}
			assert.Positive(t, evicted, "cells were evicted along the way")
			assert.Equal(t, 8, kept.Len(), "without a sweep nothing is evicted")
		})
	}
}

// Idle cells are evicted lazily as new keys come, and a key evicted and seen again gets
// exactly what it would have got had it been kept.
func TestKeyed_IdleCellsAreEvictedLazily(t *testing.T) {
	clk := clock.NewManual()
	// MaxKeys 256: one shard, so that the sweeps below are deterministic.
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxKeys(256))

	for i := range 200 {
		require.True(t, k.TryAcquire("k"+strconv.Itoa(i)))
	}
	assert.Equal(t, 200, k.Len(), "no cell is idle yet: T = 100ms after its one call")
	clk.Advance(100 * time.Millisecond) // every cell's TAT is now: all idle
	require.True(t, k.TryAcquire("new"))
	assert.Equal(t, 1, k.Len(), "the new key swept the 200 idle cells on its way in")
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 1, k.Sweep())
	assert.Equal(t, 0, k.Len())

	// A key that spent its burst is evicted only once its whole burst is back (TAT ≤ now).
	assert.Equal(t, 10, keyedAdmitted(k, "busy", 100))
	clk.Advance(900 * time.Millisecond)
	assert.Equal(t, 0, k.Sweep(), "9 of 10 permits back: not idle")
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 1, k.Sweep(), "full burst back: idle")
	assert.Equal(t, 10, keyedAdmitted(k, "busy", 100), "a fresh cell: the full burst, as if kept")
}

// At MaxKeys, idle cells make room; when none is idle a new key is refused, with the
// instant a cell becomes idle as its retry-after, and the keys already held keep their
// quota.
func TestKeyed_AtMaxKeys_NewKeysAreRefusedUntilACellIsIdle(t *testing.T) {
	clk := clock.NewManual()
	var events []policy.Event
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxKeys(100),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	require.Equal(t, 100, k.MaxKeys())

	for i := range 100 {
		require.True(t, k.TryAcquire("k"+strconv.Itoa(i)), "key %d", i)
	}
	require.Equal(t, 100, k.Len())

	clk.Advance(200 * time.Millisecond)
	assert.False(t, k.TryAcquire("new"), "full, and no cell idle before T = 500ms")
	r, err := k.Reserve("new")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 300*time.Millisecond, r.Delay(), "retry-after: the first cell is idle at 500ms")
	d := k.Decide("new")
	assert.Equal(t, ratelimit.Decision{RetryAfter: 300 * time.Millisecond, Reset: 300 * time.Millisecond}, d)
	require.NotEmpty(t, events)
	assert.Equal(t, policy.RateLimiterRejected, events[0].Kind)
	assert.Equal(t, 300*time.Millisecond, events[0].Wait)
	assert.Equal(t, 100, k.Len(), "the bound holds")

	assert.True(t, k.TryAcquire("k7"), "a key already held keeps its quota")
	assert.False(t, k.TryAcquire("k7"), "and no more than its quota")

	clk.Advance(300 * time.Millisecond) // every cell but k7's is idle
	assert.True(t, k.TryAcquire("new"), "idle cells make room")
	assert.Equal(t, 2, k.Len(), "k7 and new")
}

// SPEC RL-5 under concurrency: at one instant, however many goroutines call for a key and
// however often cells are swept, each key admits exactly its burst.
func TestKeyed_RL5_ConcurrentCallsAndSweepsNeverOverAdmit(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[int](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxKeys(1000))
	const keys, workers, rounds = 50, 8, 20
	for round := range rounds {
		var admitted [keys]atomic.Int32
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					k.Sweep()
				}
			}
		})
		var callers sync.WaitGroup
		for w := range workers {
			callers.Go(func() {
				for i := range 200 {
					key := (i + w) % keys
					if k.TryAcquire(key) {
						admitted[key].Add(1)
					}
				}
			})
		}
		callers.Wait()
		close(stop)
		wg.Wait()
		for key := range keys {
			require.EqualValues(t, 5, admitted[key].Load(), "round %d key %d", round, key)
		}
		clk.Advance(time.Second) // every cell idle again
	}
}

// SPEC RL-7, RL-9: a key's reservations wait their turn, and a canceled tail gives its
// permit back.
func TestKeyed_RL9_ReserveAndCancelPerKey(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second))

	r1, err := k.Reserve("a")
	require.NoError(t, err)
	assert.Zero(t, r1.Delay())
	r2, err := k.Reserve("a")
	require.NoError(t, err)
	assert.Equal(t, time.Second, r2.Delay())
	r3, err := k.Reserve("a")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, r3.Delay())
	_, err = k.Reserve("a")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "3s is beyond MaxWait")

	r2.Cancel() // shadowed by r3: nothing restored
	r3.Cancel() // the tail: its permit comes back
	r4, err := k.Reserve("a")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, r4.Delay(), "r3's slot, given back")

	b, err := k.Reserve("b")
	require.NoError(t, err)
	assert.Zero(t, b.Delay(), "another key is unaffected")
}

// SPEC RL-10: a disabled keyed limiter admits everything and holds no key.
func TestKeyed_RL10_Disabled(t *testing.T) {
	k := newKeyed[string](t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.Enabled(false))
	for range 10 {
		require.True(t, k.TryAcquire("a"))
		r, err := k.Reserve("a")
		require.NoError(t, err)
		assert.Zero(t, r.Delay())
		assert.Equal(t, ratelimit.Decision{Admitted: true, Remaining: 1}, k.Decide("a"))
	}
	assert.Equal(t, 1, k.AvailablePermits("a"))
	assert.Zero(t, k.Len())
}

// SPEC RL-14: the configuration is validated as New's; MaxKeys < 0 is R4C-ATR-007.
func TestKeyed_RL14_Validation(t *testing.T) {
	_, err := ratelimit.NewKeyed[string](ratelimit.Permits(0), ratelimit.Period(time.Second))
	assert.Equal(t, policy.CodeBadPermits, policy.CodeOf(err))
	_, err = ratelimit.NewKeyed[string](ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxKeys(-1))
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(err))
	assert.ErrorContains(t, err, "rateLimiter.maxKeys")

	k, err := ratelimit.NewKeyed[string](ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Name("api"))
	require.NoError(t, err)
	assert.Equal(t, ratelimit.DefaultMaxKeys, k.MaxKeys())
	assert.Equal(t, "api", k.InstanceID())
	assert.Equal(t, 1, k.Config().Permits)
	var ee *ratelimit.ExceededError
	require.ErrorAs(t, k.Rejection(), &ee)
	assert.Equal(t, "api", ee.InstanceID())
	assert.True(t, clock.IsSystem(k.Clock()))
	assert.Nil(t, k.Backend())
}

// SPEC RL-6: a call for a key that has a cell allocates nothing, admitted or refused.
func TestKeyed_RL6_ExistingKeyAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	admit := newKeyed[string](t, clk, ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	reject := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(time.Minute))
	key := "203.0.113.7"
	admit.TryAcquire(key)
	reject.TryAcquire(key)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { admit.TryAcquire(key) }), "admitted TryAcquire")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { admit.Decide(key) }), "admitted Decide")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = admit.Reserve(key) }), "admitted Reserve")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { admit.AvailablePermits(key) }), "AvailablePermits")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { reject.TryAcquire(key) }), "refused TryAcquire")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { reject.Decide(key) }), "refused Decide")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = reject.Reserve(key) }), "refused Reserve")
}

// Keys that are not equal to themselves cannot be found again; they still cannot pin the
// limiter's memory: sweeping drops them.
func TestKeyed_NaNKeysAreSweptAway(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[float64](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxKeys(300))
	for range 300 {
		require.True(t, k.TryAcquire(math.NaN()), "each NaN is a new key")
	}
	assert.False(t, k.TryAcquire(math.NaN()), "full")
	clk.Advance(time.Second)
	assert.True(t, k.TryAcquire(1.5), "the NaN cells were idle and are gone")
	assert.Equal(t, 1, k.Len())
}

// A shard that emptied after a flood of keys gives its memory back when it sweeps.
func TestKeyed_MapShrinksAfterAFlood(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[int](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxKeys(1_000_000))
	before := heapInUse()
	for i := range 200_000 {
		k.TryAcquire(i)
	}
	flooded := heapInUse()
	clk.Advance(time.Second)
	assert.Equal(t, 200_000, k.Sweep())
	after := heapInUse()
	t.Logf("heap: %d before, %d flooded, %d after the sweep", before, flooded, after)
	assert.Less(t, after-before, (flooded-before)/4, "the maps were rebuilt small")
	assert.True(t, k.TryAcquire(7))
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The memory bound under a spoofing attack: 1,000,000 distinct keys (IPv4 addresses as
// strings) against MaxKeys = 100,000 hold at most MaxKeys cells, in at most
// maxBytesPerKey bytes each, whether the attack comes at one instant (new keys are
// refused) or spread over time (idle cells are evicted).
func TestKeyed_MillionKeysStayWithinTheBound(t *testing.T) {
	const keys, maxKeys, maxBytesPerKey = 1_000_000, 100_000, 128
	for _, spread := range []bool{false, true} {
		t.Run(map[bool]string{false: "at one instant", true: "over time"}[spread], func(t *testing.T) {
			clk := clock.NewManual()
			k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.MaxKeys(maxKeys))
			require.True(t, k.TryAcquire("198.51.100.1"), "a legitimate client")
			before := heapInUse()
			refused := 0
			for i := range keys {
				if spread && i%500 == 0 {
					clk.Advance(time.Millisecond) // 500 new keys per ms: cells idle after T = 100ms
				}
				if !k.TryAcquire(ipv4(i)) {
					refused++
				}
			}
			used := heapInUse() - before
			n := k.Len()
			t.Logf("%d keys held, %d refused, %d bytes: %.1f bytes per key", n, refused, used, float64(used)/float64(n))
			assert.LessOrEqual(t, n, maxKeys)
			assert.LessOrEqual(t, used, int64(maxKeys*maxBytesPerKey))
			if spread {
				assert.Zero(t, refused, "idle cells made room for every new key")
			} else {
				assert.Positive(t, refused, "the bound refused new keys")
			}
			want := 9 // the legitimate client keeps its quota
			if spread {
				want = 10 // two seconds later: its full burst is back
			}
			assert.Equal(t, want, keyedAdmitted(k, "198.51.100.1", 100))
		})
	}
}

// ipv4 returns the i-th address of 10.0.0.0/8, as text.
func ipv4(i int) string {
	return "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
}

// A fake Backend: every key's store is a GCRA cell of its own, on the limiter's clock, so
// that the test can see which ids are bound and force the store's answers.
type fakeBackend struct {
	mu       sync.Mutex
	bound    map[string]int // id → Bind calls
	stores   map[string]*fakeStore
	outcome  ratelimit.Outcome // forced outcome; 0: decide
	failBind bool
}

type fakeStore struct {
	b       *fakeBackend
	l       *ratelimit.Limiter
	cancels int
}

func (f *fakeBackend) Bind(b ratelimit.Binding) (ratelimit.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failBind {
		return nil, errors.New("bind refused")
	}
	f.bound[b.ID]++
	if s := f.stores[b.ID]; s != nil {
		return s, nil
	}
	l, err := ratelimit.New(ratelimit.Permits(b.Config.Permits), ratelimit.Period(b.Config.Period), ratelimit.WithClock(b.Clock))
	if err != nil {
		return nil, err
	}
	s := &fakeStore{b: f, l: l}
	f.stores[b.ID] = s
	return s, nil
}

func (s *fakeStore) Reserve(_ context.Context, maxWait time.Duration) (ratelimit.Grant, error) {
	s.b.mu.Lock()
	forced := s.b.outcome
	s.b.mu.Unlock()
	if forced != 0 {
		return ratelimit.Grant{Outcome: forced, Wait: 42 * time.Millisecond}, nil
	}
	now := int64(s.l.Clock().Now())
	before := s.l.AvailablePermits()
	if s.l.TryAcquire() {
		return ratelimit.Grant{Outcome: ratelimit.Reserved, Token: ratelimit.Token{Prev: now, Next: now + int64(100*time.Millisecond)*int64(11-before), At: now}}, nil
	}
	r, _ := s.l.Reserve()
	return ratelimit.Grant{Outcome: ratelimit.Refused, Wait: r.Delay()}, nil
}

func (s *fakeStore) Cancel(context.Context, ratelimit.Token) {
	s.b.mu.Lock()
	s.cancels++
	s.b.mu.Unlock()
}

func (s *fakeStore) Available(context.Context) (int, bool) { return s.l.AvailablePermits(), true }

// With a Backend, each key is bound once, as "<id>:<key>", and the key's store decides.
func TestKeyed_RL15_BackendBindsOneStorePerKey(t *testing.T) {
	clk := clock.NewManual()
	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}}
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.WithBackend(fb),
		ratelimit.MaxWait(time.Second))
	assert.Same(t, fb, k.Backend())

	assert.Equal(t, 10, keyedAdmitted(k, "alice", 100))
	d := k.Decide("alice")
	assert.False(t, d.Admitted)
	assert.Equal(t, 100*time.Millisecond, d.RetryAfter, "the store's retry-after")
	assert.Equal(t, time.Second, d.Reset)
	assert.Equal(t, 10, keyedAdmitted(k, "bob", 100))
	assert.Equal(t, map[string]int{"keyed:alice": 1, "keyed:bob": 1}, fb.bound, "one binding per key, kept while in use")
	assert.Equal(t, 0, k.AvailablePermits("alice"), "asked of alice's store")
	assert.Equal(t, 10, k.AvailablePermits("carol"), "asked of carol's store")

	clk.Advance(100 * time.Millisecond)
	r, err := k.Reserve("alice")
	require.NoError(t, err)
	r.Cancel()
	assert.Equal(t, 1, fb.stores["keyed:alice"].cancels, "canceled in alice's store")

	// A store that cannot answer and falls back on Local: the key's in-process cell decides.
	fb.mu.Lock()
	fb.outcome = ratelimit.Local
	fb.mu.Unlock()
	assert.Equal(t, 10, keyedAdmitted(k, "alice", 100), "alice's local cell has its burst")

	fb.mu.Lock()
	fb.outcome = ratelimit.Unlimited
	fb.mu.Unlock()
	assert.Equal(t, 100, keyedAdmitted(k, "alice", 100), "unlimited")
	r, err = k.Reserve("alice")
	require.NoError(t, err)
	r.Cancel() // nothing to give back

	fb.mu.Lock()
	fb.outcome = ratelimit.Refused
	fb.mu.Unlock()
	r, err = k.Reserve("alice")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 42*time.Millisecond, r.Delay())

	// Cells are kept one Period after their last use, then evicted; the remote state stays.
	clk.Advance(2 * time.Second)
	assert.Equal(t, 2, k.Sweep())
}

// A backend that refuses to bind a key leaves it in-process, with an event.
func TestKeyed_BackendBindFailureFallsBackInProcess(t *testing.T) {
	clk := clock.NewManual()
	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}, failBind: true}
	var events []policy.Event
	k := newKeyed[int](t, clk, ratelimit.Permits(3), ratelimit.Period(time.Second), ratelimit.WithBackend(fb),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	assert.Equal(t, 3, keyedAdmitted(k, 7, 100))
	assert.Equal(t, 0, k.AvailablePermits(7))
	require.NotEmpty(t, events)
	assert.Equal(t, policy.RateLimiterBackendFailed, events[0].Kind)
}

func ExampleKeyed() {
	clk := clock.NewManual()
	perClient, _ := ratelimit.NewKeyed[string](ratelimit.Permits(10), ratelimit.Period(time.Second),
		ratelimit.MaxKeys(10_000), ratelimit.WithClock(clk))

	for range 10 {
		perClient.TryAcquire("203.0.113.7")
	}
	d := perClient.Decide("203.0.113.7")
	fmt.Println("11th call admitted:", d.Admitted, "retry after:", d.RetryAfter)
	fmt.Println("another client admitted:", perClient.TryAcquire("198.51.100.4"))

	clk.Advance(d.RetryAfter)
	fmt.Println("after the retry-after:", perClient.TryAcquire("203.0.113.7"))
	// Output:
	// 11th call admitted: false retry after: 100ms
	// another client admitted: true
	// after the retry-after: true
}
