package keyed_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// blockingClock is a manual clock whose Sleep blocks until its context ends, standing for
// a wait interrupted by the caller.
type blockingClock struct {
	*clock.Manual
	sleeping chan struct{}
}

func (b blockingClock) Sleep(ctx context.Context, _ time.Duration) error {
	close(b.sleeping)
	<-ctx.Done()
	return ctx.Err()
}

// newLimiter returns a Limiter named "test" on clk, for comparing a key with it.
func newLimiter(t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.Name("test")}, opts...)...)
	require.NoError(t, err)
	return l
}

func newKeyed[K comparable](t testing.TB, clk clock.Clock, opts ...ratelimit.Option) *keyed.Limiter[K] {
	t.Helper()
	k, err := keyed.New[K](append([]ratelimit.Option{ratelimit.WithClock(clk), ratelimit.Name("keyed")}, opts...)...)
	require.NoError(t, err)
	return k
}

// keyedAdmitted counts how many TryAcquire calls for key pass in a row at the current instant.
func keyedAdmitted[K comparable](k *keyed.Limiter[K], key K, atMost int) int {
	n := 0
	for n < atMost && k.TryAcquire(key, 1) == nil {
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
	assert.False(t, k.TryAcquire("alice", 1) == nil, "alice's 11th call")
	assert.Equal(t, 10, keyedAdmitted(k, "bob", 100), "bob is unaffected by alice")
	assert.Equal(t, 0, keyed.AvailablePermits(k, "alice"))
	assert.Equal(t, 10, keyed.AvailablePermits(k, "carol"), "a key never seen has its full burst")

	clk.Advance(100 * time.Millisecond)
	assert.True(t, k.TryAcquire("alice", 1) == nil, "one permit every 1s/10")
	assert.False(t, k.TryAcquire("alice", 1) == nil, "and only one")
	assert.Equal(t, 2, k.Len())
}

// SPEC RL-9b: Decide reports what the HTTP rate-limit headers carry.
func TestKeyed_RL9b_DecideReportsQuota(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second))

	d := k.Decide(context.Background(), "alice")
	assert.Equal(t, keyed.Decision{Admitted: true, Limit: 10, Period: time.Second, Remaining: 9, Reset: 100 * time.Millisecond}, d)
	for range 9 {
		require.True(t, k.Decide(context.Background(), "alice").Admitted)
	}
	d = k.Decide(context.Background(), "alice")
	assert.Equal(t, keyed.Decision{Admitted: false, Limit: 10, Period: time.Second, Remaining: 0, RetryAfter: 100 * time.Millisecond, Reset: time.Second}, d)

	clk.Advance(30 * time.Millisecond)
	d = k.Decide(context.Background(), "alice")
	assert.Equal(t, keyed.Decision{Admitted: false, Limit: 10, Period: time.Second, Remaining: 0, RetryAfter: 70 * time.Millisecond, Reset: 970 * time.Millisecond}, d)

	// A call made after the retry-after passes (RL-9b).
	clk.Advance(d.RetryAfter)
	d = k.Decide(context.Background(), "alice")
	assert.Equal(t, keyed.Decision{Admitted: true, Limit: 10, Period: time.Second, Remaining: 0, Reset: time.Second}, d)
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
					require.Equal(t, want, swept.TryAcquire(key, 1) == nil, "step %d TryAcquire(%d), swept", step, key)
					require.Equal(t, want, kept.TryAcquire(key, 1) == nil, "step %d TryAcquire(%d), kept", step, key)
				case op < 8:
					wr, werr := ref(key).Reserve()
					sr, serr := swept.Reserve(key, 1)
					kr, kerr := kept.Reserve(key, 1)
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
					require.Equal(t, ref(key).Snapshot().AvailablePermits, keyed.AvailablePermits(swept, key), "step %d available(%d)", step, key)
				}
				evicted += swept.Sweep()
			}
			assert.Positive(t, evicted, "cells were evicted along the way")
			assert.Equal(t, 8, kept.Len(), "without a sweep nothing is evicted")
		})
	}
}

// Idle cells are kept until a new key needs their place at MaxKeys, or Sweep evicts them:
// an idle cell admits a full burst, as a new one does, so keeping it changes nothing, and
// a client seen again finds its cell (fault: idle cells were swept as new keys came, and
// each returning client made its cell and its key anew).
func TestKeyed_RL21_IdleCellsAreKeptUntilTheirPlaceIsNeeded(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), keyed.Bounds(256, 0))

	for i := range 200 {
		require.True(t, k.TryAcquire("k"+strconv.Itoa(i), 1) == nil)
	}
	assert.Equal(t, 200, k.Len())
	clk.Advance(100 * time.Millisecond) // every cell's TAT is now: all idle
	require.True(t, k.TryAcquire("new", 1) == nil)
	assert.Equal(t, 201, k.Len(), "below the bound, idle cells stay")
	for i := range 200 {
		require.Equal(t, 10, keyed.AvailablePermits(k, "k"+strconv.Itoa(i)), "an idle cell has its full burst")
	}
	for i := range 100 {
		require.True(t, k.TryAcquire("more"+strconv.Itoa(i), 1) == nil)
		require.LessOrEqual(t, k.Len(), 256)
	}
	assert.Equal(t, 256, k.Len(), "at the bound, each new key takes one idle cell's place")
	assert.Equal(t, 9, keyedAdmitted(k, "more0", 100), "a cell made at the bound starts with its burst: 9 left after its first call")
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 255, k.Sweep(), "Sweep evicts every idle cell: all but more0, which spent its burst")
	assert.Equal(t, 1, k.Len())

	// A key that spent its burst is evicted only once its whole burst is back (TAT ≤ now).
	assert.Equal(t, 10, keyedAdmitted(k, "busy", 100))
	clk.Advance(900 * time.Millisecond)
	assert.Equal(t, 1, k.Sweep(), "more0 is idle; busy has 9 of 10 permits back: not idle")
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 1, k.Sweep(), "full burst back: idle")
	assert.Equal(t, 10, keyedAdmitted(k, "busy", 100), "a fresh cell: the full burst, as if kept")
}

// At MaxKeys, a new key is admitted in place of the cell that becomes idle first among a
// few sampled: a flood of new keys locks out no client, and a key that has spent its
// quota, its TAT far ahead, keeps it (fault: a full limiter refused every new key).
func TestKeyed_AtMaxKeys_NewKeysTakeThePlaceOfTheCellNearestIdle(t *testing.T) {
	clk := clock.NewManual()
	var events []policy.Event
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), keyed.Bounds(100, 0),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	require.Equal(t, 100, keyed.MaxKeysOf(k))

	require.Equal(t, 2, keyedAdmitted(k, "heavy", 10), "its whole burst: TAT 1s")
	for i := range 99 {
		require.True(t, k.TryAcquire("k"+strconv.Itoa(i), 1) == nil, "key %d", i) // TAT 500ms
	}
	require.Equal(t, 100, k.Len())
	events = nil

	clk.Advance(200 * time.Millisecond)
	for i := range 10_000 {
		require.True(t, k.TryAcquire("flood"+strconv.Itoa(i), 1) == nil, "a new key is never refused for lack of room")
		require.LessOrEqual(t, k.Len(), 100, "the bound holds")
	}
	assert.Empty(t, events, "nothing was refused")
	assert.True(t, k.TryAcquire("alice", 1) == nil, "a new client after the flood")
	assert.False(t, k.TryAcquire("heavy", 1) == nil, "the key that spent its quota was never evicted, and keeps its limit")
	d := k.Decide(context.Background(), "heavy")
	assert.Equal(t, keyed.Decision{Limit: 2, Period: time.Second, RetryAfter: 300 * time.Millisecond, Reset: 800 * time.Millisecond}, d)
	require.Len(t, events, 2)
	assert.Equal(t, ratelimit.EventRejected, events[0].Kind)
	assert.Equal(t, "heavy", events[0].Key)
	assert.Equal(t, 300*time.Millisecond, events[0].RetryAfter)
}

// With many shards, a flood of new keys at one instant leaves every key that spent its
// quota limited, and lets new clients in (fault: a full limiter refused every new key).
func TestKeyed_FloodOfNewKeysKeepsBusyKeysLimited(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Minute), keyed.Bounds(16_384, 0))
	heavy := make([]string, 50)
	for i := range heavy {
		heavy[i] = "user-" + strconv.Itoa(i)
		require.Equal(t, 5, keyedAdmitted(k, heavy[i], 10))
	}
	clk.Advance(time.Second)
	refused := 0
	for i := range 200_000 {
		if k.TryAcquire(ipv4(i), 1) != nil {
			refused++
		}
	}
	assert.Zero(t, refused, "no new key was refused")
	assert.LessOrEqual(t, k.Len(), 16_384)
	for _, key := range heavy {
		assert.False(t, k.TryAcquire(key, 1) == nil, "%s spent its quota and is still held", key)
	}
	assert.Equal(t, 5, keyedAdmitted(k, "203.0.113.9", 10), "a new client gets its burst")
}

// SPEC RL-5 under concurrency: at one instant, however many goroutines call for a key and
// however often cells are swept, each key admits exactly its burst.
func TestKeyed_RL5_ConcurrentCallsAndSweepsNeverOverAdmit(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[int](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.Bounds(1000, 0))
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
					if k.TryAcquire(key, 1) == nil {
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

// SPEC RL-7, RL-9: a key's reservations wait their turn, and canceled ones give their
// permits back, the earliest first.
func TestKeyed_RL9_ReserveAndCancelPerKey(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second))

	r1, err := k.Reserve("a", 1)
	require.NoError(t, err)
	assert.Zero(t, r1.Delay())
	r2, err := k.Reserve("a", 1)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r2.Delay())
	r3, err := k.Reserve("a", 1)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, r3.Delay())
	_, err = k.Reserve("a", 1)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "3s is beyond MaxWait")

	r2.Cancel() // r3 stands behind it: its slot stays free
	r3.Cancel() // the tail: the TAT moves back over r3's slot and r2's
	r4, err := k.Reserve("a", 1)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r4.Delay(), "r2's slot, given back")
	r5, err := k.Reserve("a", 1)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, r5.Delay(), "r3's slot, given back")

	b, err := k.Reserve("b", 1)
	require.NoError(t, err)
	assert.Zero(t, b.Delay(), "another key is unaffected")
}

// SPEC RL-10: a disabled keyed limiter admits everything and holds no key.
func TestKeyed_RL10_Disabled(t *testing.T) {
	k := newKeyed[string](t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.Enabled(false))
	for range 10 {
		require.True(t, k.TryAcquire("a", 1) == nil)
		r, err := k.Reserve("a", 1)
		require.NoError(t, err)
		assert.Zero(t, r.Delay())
		assert.Equal(t, keyed.Decision{Admitted: true, Limit: 1, Period: time.Hour, Remaining: 1}, k.Decide(context.Background(), "a"))
	}
	assert.Equal(t, 1, keyed.AvailablePermits(k, "a"))
	assert.Zero(t, k.Len())
}

// SPEC RL-14: the configuration is validated as New's; MaxKeys < 0 is R4C-ATR-007.
func TestKeyed_RL14_Validation(t *testing.T) {
	_, err := keyed.New[string](ratelimit.Permits(0), ratelimit.Period(time.Second))
	assert.Equal(t, r4c.BadPermits, r4c.CodeOf(err))
	_, err = keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Second), keyed.Bounds(-1, 0))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	assert.ErrorContains(t, err, "rateLimiter.maxKeys")

	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Name("api"))
	require.NoError(t, err)
	assert.Equal(t, 100_000, keyed.MaxKeysOf(k))
	assert.Equal(t, "api", keyed.InstanceID(k))
	assert.Equal(t, 1, k.Config().Permits)
	var ee *ratelimit.ExceededError
	require.ErrorAs(t, keyed.Rejection(k), &ee)
	assert.Equal(t, "api", ee.InstanceID())
	assert.True(t, sysclock.Is(keyed.ClockOf(k)))
}

// SPEC RL-6: a call for a key that has a cell allocates nothing, admitted or refused.
func TestKeyed_RL6_ExistingKeyAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	admit := newKeyed[string](t, clk, ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	reject := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(time.Minute))
	key := "203.0.113.7"
	_ = admit.TryAcquire(key, 1)
	_ = reject.TryAcquire(key, 1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = admit.TryAcquire(key, 1) }), "admitted TryAcquire")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { admit.Decide(context.Background(), key) }), "admitted Decide")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = admit.Reserve(key, 1) }), "admitted Reserve")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { keyed.AvailablePermits(admit, key) }), "AvailablePermits")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = reject.TryAcquire(key, 1) }), "refused TryAcquire")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { reject.Decide(context.Background(), key) }), "refused Decide")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = reject.Reserve(key, 1) }), "refused Reserve")
}

// A shard that emptied after a flood of keys gives its memory back when it sweeps (its
// index is rebuilt smaller, and the evicted entries are garbage).
func TestKeyed_IndexShrinksAfterAFlood(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[int](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), keyed.Bounds(1_000_000, 0))
	before := heapInUse()
	for i := range 200_000 {
		_ = k.TryAcquire(i, 1)
	}
	flooded := heapInUse()
	clk.Advance(time.Second)
	assert.Equal(t, 200_000, k.Sweep())
	after := heapInUse()
	t.Logf("heap: %d before, %d flooded, %d after the sweep", before, flooded, after)
	assert.Less(t, after-before, (flooded-before)/4, "the indexes were rebuilt small")
	assert.True(t, k.TryAcquire(7, 1) == nil)
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The memory bound under a spoofing attack: 1,000,000 distinct keys (IPv4 addresses as
// strings) against MaxKeys = 100,000 hold at most MaxKeys cells, in at most
// maxBytesPerKey bytes each, whether the attack comes at one instant (busy cells nearest
// idle are evicted) or spread over time (idle cells are evicted). Under the race detector
// (one goroutine here, and every atomic access checked) the flood and the bound are a
// tenth as large.
func TestKeyed_MillionKeysStayWithinTheBound(t *testing.T) {
	keys, maxKeys := 1_000_000, 100_000
	if raceEnabled {
		keys, maxKeys = 100_000, 10_000
	}
	const maxBytesPerKey = 128
	perMs := keys / 2000 // the flood spread over two seconds
	for _, spread := range []bool{false, true} {
		t.Run(map[bool]string{false: "at one instant", true: "over time"}[spread], func(t *testing.T) {
			clk := clock.NewManual()
			k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), keyed.Bounds(maxKeys, 0))
			require.True(t, k.TryAcquire("198.51.100.1", 1) == nil, "a legitimate client")
			before := heapInUse()
			refused := 0
			for i := range keys {
				if spread && i%perMs == 0 {
					clk.Advance(time.Millisecond) // cells idle after T = 100ms
				}
				if k.TryAcquire(ipv4(i), 1) != nil {
					refused++
				}
			}
			used := heapInUse() - before
			n := k.Len()
			t.Logf("%d keys held, %d refused, %d bytes: %.1f bytes per key", n, refused, used, float64(used)/float64(n))
			assert.LessOrEqual(t, n, maxKeys)
			assert.LessOrEqual(t, used, int64(maxKeys*maxBytesPerKey))
			assert.Zero(t, refused, "no new key is refused: idle cells, or the cells nearest idle, make room")
			got := keyedAdmitted(k, "198.51.100.1", 100)
			if spread {
				assert.Equal(t, 10, got, "two seconds later: its full burst is back")
			} else {
				// It made one call, as each flood key did: evicted with them, it starts afresh.
				assert.Contains(t, []int{9, 10}, got, "the legitimate client is not locked out")
			}
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
	outcome  backend.Verdict // forced outcome; 0: decide
	grant    backend.Grant   // forced grant, when its Verdict is not 0
	failBind bool
	nilStore bool // Bind returns neither a Store nor an error
}

type fakeStore struct {
	b       *fakeBackend
	clk     clock.Clock
	l       *ratelimit.Limiter // the store's state, made at the first Reserve, at its rate
	cancels int
}

func (f *fakeBackend) Bind(b backend.Binding) (backend.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failBind {
		return nil, errors.New("bind refused")
	}
	if f.nilStore {
		return nil, nil
	}
	f.bound[b.ID]++
	if s := f.stores[b.ID]; s != nil {
		return s, nil
	}
	s := &fakeStore{b: f, clk: b.Clock}
	f.stores[b.ID] = s
	return s, nil
}
func (*fakeBackend) LocalShare() int { return 1 }

func (s *fakeStore) Reserve(_ context.Context, req backend.Request) (backend.Grant, error) {
	s.b.mu.Lock()
	forced, grant := s.b.outcome, s.b.grant
	if s.l == nil {
		opts := []ratelimit.Option{ratelimit.Permits(req.Permits), ratelimit.Period(req.Period), ratelimit.WithClock(s.clk)}
		if len(req.Windows) > 0 {
			ws := make([]string, len(req.Windows))
			for i, w := range req.Windows {
				ws[i] = fmt.Sprintf("%d/%s", w.Permits, w.Period)
			}
			opts = append(opts, ratelimit.Windows(strings.Join(ws, ", ")))
		}
		s.l, _ = ratelimit.New(opts...)
	}
	s.b.mu.Unlock()
	if grant.Verdict != 0 {
		return grant, nil
	}
	switch forced {
	case 0:
	case backend.Admitted: // the backend lets calls pass, reserving nothing
		return backend.Grant{Verdict: backend.Admitted}, nil
	default:
		return backend.Grant{Verdict: forced, Wait: 42 * time.Millisecond}, nil
	}
	now := int64(s.clk.Now())
	before := s.l.Snapshot().AvailablePermits
	if s.l.TryAcquire() {
		return backend.Grant{Verdict: backend.Admitted, Prev: now, Next: now + int64(100*time.Millisecond)*int64(11-before), At: now}, nil
	}
	r, _ := s.l.Reserve()
	return backend.Grant{Verdict: backend.Refused, Wait: r.Delay()}, nil
}

func (s *fakeStore) Cancel(context.Context, backend.Grant) {
	s.b.mu.Lock()
	s.cancels++
	s.b.mu.Unlock()
}

func (s *fakeStore) Available(_ context.Context, req backend.Request) (int, bool) {
	s.b.mu.Lock()
	if s.l == nil {
		s.l, _ = ratelimit.New(ratelimit.Permits(req.Permits), ratelimit.Period(req.Period), ratelimit.WithClock(s.clk))
	}
	s.b.mu.Unlock()
	return s.l.Snapshot().AvailablePermits, true
}

// With a Backend, each key is bound once, as "<id>:<key>", and the key's store decides.
func TestKeyed_RL15_BackendBindsOneStorePerKey(t *testing.T) {
	clk := clock.NewManual()
	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}}
	k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.WithBackend(fb),
		ratelimit.MaxWait(time.Second))

	assert.Equal(t, 10, keyedAdmitted(k, "alice", 100))
	d := k.Decide(context.Background(), "alice")
	assert.False(t, d.Admitted)
	assert.Equal(t, 100*time.Millisecond, d.RetryAfter, "the store's retry-after")
	assert.Equal(t, time.Second, d.Reset)
	assert.Equal(t, 10, keyedAdmitted(k, "bob", 100))
	assert.Equal(t, map[string]int{"keyed:alice": 1, "keyed:bob": 1}, fb.bound, "one binding per key, kept while in use")
	assert.Equal(t, 0, keyed.AvailablePermits(k, "alice"), "asked of alice's store")
	assert.Equal(t, 10, keyed.AvailablePermits(k, "carol"), "asked of carol's store")

	clk.Advance(100 * time.Millisecond)
	r, err := k.Reserve("alice", 1)
	require.NoError(t, err)
	r.Cancel()
	assert.Equal(t, 1, fb.stores["keyed:alice"].cancels, "canceled in alice's store")

	// A store that cannot answer and falls back on Local: the key's in-process cell decides.
	fb.mu.Lock()
	fb.outcome = backend.Local
	fb.mu.Unlock()
	assert.Equal(t, 10, keyedAdmitted(k, "alice", 100), "alice's local cell has its burst")

	fb.mu.Lock()
	fb.outcome = backend.Admitted
	fb.mu.Unlock()
	assert.Equal(t, 100, keyedAdmitted(k, "alice", 100), "admitted, nothing reserved: unlimited")
	r, err = k.Reserve("alice", 1)
	require.NoError(t, err)
	r.Cancel() // nothing to give back

	fb.mu.Lock()
	fb.outcome = backend.Refused
	fb.mu.Unlock()
	r, err = k.Reserve("alice", 1)
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
	assert.Equal(t, 0, keyed.AvailablePermits(k, 7))
	require.NotEmpty(t, events)
	assert.Equal(t, backend.EventFailed, events[0].Kind)
}

// SPEC RL-7 per key: Acquire waits for a key's permit within MaxWait, and refuses at once,
// reserving nothing, a permit beyond it; waits and refusals publish events that name the
// key, with Wait for a wait and RetryAfter for a refusal.
func TestKeyed_RL7_AcquireWaitsWithinMaxWait(t *testing.T) {
	clk := clock.NewManual()
	var events []policy.Event
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	ctx := context.Background()

	require.NoError(t, k.Acquire(ctx, "a", 1))
	assert.Zero(t, clk.Now())
	require.NoError(t, k.Acquire(ctx, "a", 1))
	assert.Equal(t, time.Second, clk.Now(), "waited for its turn")
	require.Len(t, events, 1)
	assert.Equal(t, policy.Event{Kind: ratelimit.EventWaited, Instance: "keyed", Wait: time.Second, Key: "a"}, events[0])

	for _, want := range []time.Duration{time.Second, 2 * time.Second} {
		r, err := k.Reserve("a", 1)
		require.NoError(t, err)
		require.Equal(t, want, r.Delay())
	}
	err := k.Acquire(ctx, "a", 1)
	require.ErrorIs(t, err, ratelimit.ErrExceeded, "3s is beyond MaxWait")
	assert.Same(t, keyed.Rejection(k), err)
	assert.Equal(t, time.Second, clk.Now(), "refused at once")
	last := events[len(events)-1]
	assert.Equal(t, ratelimit.EventRejected, last.Kind)
	assert.Equal(t, "a", last.Key)
	assert.Equal(t, 3*time.Second, last.RetryAfter)
	assert.Zero(t, last.Wait, "a refused call is not held")
	r, err := k.Reserve("a", 1)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 3*time.Second, r.Delay(), "the refusal reserved nothing")

	require.NoError(t, k.Acquire(ctx, "b", 1), "another key is unaffected")
	assert.Equal(t, time.Second, clk.Now())
}

// SPEC RL-8 per key: a nil or done context is refused on arrival, without a panic, a
// permit or an event; a deadline before the permit is refused at once, unreserved; a
// context that ends during the wait gives the permit back (fault: Keyed had no Acquire,
// and a nil context must never panic).
func TestKeyed_RL8_AcquireHonoursTheContext(t *testing.T) {
	clk := blockingClock{clock.NewManual(), make(chan struct{})}
	var events []policy.Event
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))

	for _, c := range []ctxtest.Over{ctxtest.Nil(), ctxtest.Canceled()} {
		var err error
		require.NotPanics(t, func() { err = k.Acquire(c.Ctx, "a", 1) })
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.ErrorIs(t, err, c.Want)
	}
	assert.Empty(t, events, "refused on arrival: no event")
	assert.Equal(t, 2, keyed.AvailablePermits(k, "a"), "no permit taken")
	assert.Zero(t, k.Len(), "no cell made")

	require.Equal(t, 2, keyedAdmitted(k, "a", 2))
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	err := k.Acquire(short, "a", 1) // its permit is 500ms away
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, events, 1)
	assert.Equal(t, 500*time.Millisecond, events[0].RetryAfter)
	assert.Equal(t, "a", events[0].Key)

	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error)
	go func() { result <- k.Acquire(ctx, "a", 1) }()
	<-clk.sleeping
	cancel()
	err = <-result
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.ErrorIs(t, err, context.Canceled)
	r, rerr := k.Reserve("a", 1)
	require.NoError(t, rerr)
	assert.Equal(t, 500*time.Millisecond, r.Delay(), "the canceled wait's permit is free again")

	off := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	assert.NoError(t, off.Acquire(context.Background(), "a", 1), "disabled")
}

// With a Backend, Acquire asks the key's store within the context; a nil context asks
// nothing and binds nothing (fault: a nil context must never panic).
func TestKeyed_AcquireWithBackend(t *testing.T) {
	clk := clock.NewManual()
	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}}
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.WithBackend(fb))
	var nilCtx context.Context
	err := k.Acquire(nilCtx, "a", 1)
	assert.ErrorIs(t, err, policy.ErrNilContext)
	assert.Empty(t, fb.bound, "the store was not asked")

	require.NoError(t, k.Acquire(context.Background(), "a", 1))
	require.NoError(t, k.Acquire(context.Background(), "a", 1))
	assert.ErrorIs(t, k.Acquire(context.Background(), "a", 1), ratelimit.ErrExceeded)
	assert.Equal(t, map[string]int{"keyed:a": 1}, fb.bound)
}

// A zero Keyed, never built, admits nothing and never panics.
func TestKeyed_ZeroValueRefusesEveryCall(t *testing.T) {
	var zero keyed.Limiter[string]
	for _, k := range []*keyed.Limiter[string]{&zero, nil} {
		zeroRefuses(t, k)
	}
}

// zeroRefuses checks that k, a zero or nil Keyed, refuses every call and never panics.
func zeroRefuses(t *testing.T, k *keyed.Limiter[string]) {
	require.NotPanics(t, func() {
		assert.False(t, k.TryAcquire("a", 1) == nil)
		assert.ErrorIs(t, k.Acquire(context.Background(), "a", 1), ratelimit.ErrExceeded)
		_, err := k.Reserve("a", 1)
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.False(t, k.Decide(context.Background(), "a").Admitted)
		assert.Zero(t, keyed.AvailablePermits(k, "a"))
		assert.Zero(t, k.Len())
		assert.Zero(t, k.Sweep())
		assert.ErrorIs(t, keyed.Rejection(k), ratelimit.ErrExceeded)
	})
}

// digestOf is the digest a keyed limiter keeps for a long key.
func digestOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "~sha256:" + hex.EncodeToString(sum[:])
}

// A key longer than MaxKeyBytes is kept as its 72-byte digest: 1,000 keys of 1 MB hold
// kilobytes, not a gigabyte; events name the digest; and two long keys that differ only
// in their last byte keep separate quotas (fault: the limiter bounded the number of keys,
// not their size).
func TestKeyed_LongKeysAreKeptAsTheirDigest(t *testing.T) {
	const keys, size = 1000, 1 << 20
	clk := clock.NewManual()
	var events []policy.Event
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	assert.Equal(t, 256, keyed.MaxKeyBytesOf(k))

	// The keys are windows of one buffer: distinct 1 MB strings that the test holds once.
	buf := make([]byte, size+keys)
	for i := range buf {
		buf[i] = byte(rand.Uint32())
	}
	big := string(buf)
	before := heapInUse()
	for i := range keys {
		require.True(t, k.TryAcquire(big[i:i+size], 1) == nil, "key %d", i)
	}
	used := heapInUse() - before
	t.Logf("%d keys of %d bytes: %d bytes held", keys, size, used)
	assert.Equal(t, keys, k.Len())
	assert.Less(t, used, int64(keys*1024), "well under 1 KB per key")

	assert.False(t, k.TryAcquire(big[7:7+size], 1) == nil, "a long key keeps its quota")
	require.NotEmpty(t, events)
	assert.Equal(t, digestOf(big[7:7+size]), events[len(events)-1].Key)
	assert.Len(t, events[len(events)-1].Key, 72)

	// Two keys that differ only in their last byte.
	a, b := []byte(big[:size]), []byte(big[:size])
	b[size-1] ^= 1
	assert.True(t, k.TryAcquire(string(b), 1) == nil, "a different key has its own quota")
	assert.False(t, k.TryAcquire(string(a), 1) == nil)
	assert.False(t, k.TryAcquire(string(b), 1) == nil)

	// No key kept as it is can stand for another's digest.
	assert.True(t, k.TryAcquire(digestOf(big[:size]), 1) == nil, "the digest, sent as a key, is another key")
	assert.False(t, k.TryAcquire(digestOf(big[:size]), 1) == nil)
	runtime.KeepAlive(big)
}

// MaxKeyBytes sets the bound: a key of n bytes is kept as it is, one of n+1 as its
// digest; keys of a string type of their own and strings in a Keyed[any] are bounded
// too, and a short key still allocates nothing. A negative bound is R4C-ATR-007.
func TestKeyed_MaxKeyBytes(t *testing.T) {
	clk := clock.NewManual()
	var keys []string
	listen := ratelimit.OnEvent(func(e policy.Event) { keys = append(keys, e.Key) })
	k := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), keyed.Bounds(0, 4), listen)
	assert.Equal(t, 4, keyed.MaxKeyBytesOf(k))
	for _, key := range []string{"abcd", "abcde"} {
		require.True(t, k.TryAcquire(key, 1) == nil)
		require.False(t, k.TryAcquire(key, 1) == nil)
	}
	assert.Equal(t, []string{"abcd", digestOf("abcde")}, keys)

	type clientID string
	named := newKeyed[clientID](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), keyed.Bounds(0, 4), listen)
	require.True(t, named.TryAcquire("abcde", 1) == nil)
	require.False(t, named.TryAcquire("abcde", 1) == nil)
	assert.Equal(t, digestOf("abcde"), keys[len(keys)-1])
	require.True(t, named.TryAcquire("ab", 1) == nil)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = named.TryAcquire("ab", 1) }), "a short key allocates nothing")

	anyKeys := newKeyed[any](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), keyed.Bounds(0, 4), listen)
	require.True(t, anyKeys.TryAcquire("abcde", 1) == nil)
	require.False(t, anyKeys.TryAcquire("abcde", 1) == nil)
	assert.Equal(t, digestOf("abcde"), keys[len(keys)-1])
	require.True(t, anyKeys.TryAcquire(12345, 1) == nil)
	require.False(t, anyKeys.TryAcquire(12345, 1) == nil)
	assert.Equal(t, "12345", keys[len(keys)-1], "a key that is not a string is kept and named as it is")

	_, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Second), keyed.Bounds(0, -1))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	assert.ErrorContains(t, err, "rateLimiter.maxKeyBytes")
}

// With a Backend, a long key is bound by its digest: the backend's ids are bounded too.
func TestKeyed_LongKeysAreBoundByTheirDigest(t *testing.T) {
	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}}
	k := newKeyed[string](t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.WithBackend(fb))
	long := strings.Repeat("x", 10_000)
	require.True(t, k.TryAcquire(long, 1) == nil)
	assert.Equal(t, map[string]int{"keyed:" + digestOf(long): 1}, fb.bound)
}

// keyName is a key type with a String method.
type keyName struct{ tenant, user int }

func (n keyName) String() string { return fmt.Sprintf("%d/%d", n.tenant, n.user) }

// The events of a keyed limiter carry the key, formatted with fmt for a key that is not a
// string; a string key costs no allocation, even with a listener (fault: events did not
// say which key was refused, and carried the retry-after in Wait).
func TestKeyed_EventsCarryTheKey(t *testing.T) {
	clk := clock.NewManual()
	var last policy.Event
	count := 0
	listen := ratelimit.OnEvent(func(e policy.Event) { last = e; count++ })

	ints := newKeyed[int](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), listen)
	require.True(t, ints.TryAcquire(42, 1) == nil)
	require.False(t, ints.TryAcquire(42, 1) == nil)
	assert.Equal(t, policy.Event{Kind: ratelimit.EventRejected, Instance: "keyed", RetryAfter: time.Second,
		Err: keyed.Rejection(ints), Key: "42"}, last)

	named := newKeyed[keyName](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), listen)
	require.True(t, named.TryAcquire(keyName{7, 9}, 1) == nil)
	require.False(t, named.Decide(context.Background(), keyName{7, 9}).Admitted)
	assert.Equal(t, "7/9", last.Key)

	strs := newKeyed[string](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), listen)
	require.True(t, strs.TryAcquire("203.0.113.7", 1) == nil)
	_, err := strs.Reserve("203.0.113.7", 1)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, "203.0.113.7", last.Key)
	assert.Equal(t, time.Hour, last.RetryAfter)
	assert.Zero(t, last.Wait)
	before := count
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = strs.TryAcquire("203.0.113.7", 1) }), "refused, with a listener")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { strs.Decide(context.Background(), "203.0.113.7") }), "refused Decide, with a listener")
	assert.Greater(t, count, before)
}

// SPEC RL-11 per key: Len reports the keys held, Config every key's configuration, and a
// key's available permits are its own, read without making a cell.
func TestKeyed_RL11_State(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(3), ratelimit.Period(time.Second), keyed.Bounds(1000, 0),
		ratelimit.MaxWait(time.Second))
	require.Equal(t, 2, keyedAdmitted(k, "a", 2))
	require.True(t, k.TryAcquire("b", 1) == nil)
	assert.Equal(t, 2, k.Len())
	assert.Equal(t, 1000, keyed.MaxKeysOf(k))
	assert.Equal(t, 256, keyed.MaxKeyBytesOf(k))
	assert.Equal(t, ratelimit.Config{Permits: 3, Period: time.Second, MaxWait: time.Second}, k.Config())
	assert.Equal(t, 1, keyed.AvailablePermits(k, "a"))
	assert.Equal(t, 3, keyed.AvailablePermits(k, "new"))
	assert.Equal(t, 2, k.Len(), "reading a key's permits makes no cell")
}

// What per-client HTTP middleware asks of a keyed limiter: a decision per request key
// (admitted or refused, the retry-after, the limit, the permits left, the reset) and the
// configuration for the policy it advertises.
var _ interface {
	Decide(ctx context.Context, key string) keyed.Decision
	Config() ratelimit.Config
} = (*keyed.Limiter[string])(nil)

// Durations near the largest Duration saturate: with a period and maxWait of about 292
// years, and a backend answering the largest waits, no retry-after, reset or delay is
// ever negative or wraps (fault: computed durations could overflow).
func TestKeyed_ExtremeDurationsSaturate(t *testing.T) {
	maxD := time.Duration(math.MaxInt64)
	t.Run("largest period and maxWait", func(t *testing.T) {
		clk := clock.NewManual()
		clk.Advance(time.Hour)
		k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(maxD), ratelimit.MaxWait(maxD))
		d := k.Decide(context.Background(), "a")
		require.True(t, d.Admitted)
		assert.Equal(t, 1, d.Remaining)
		r, err := k.Reserve("a", 1)
		require.NoError(t, err, "the burst of 2, though the TAT passes the largest Duration")
		assert.Zero(t, r.Delay())
		for range 10 {
			d = k.Decide(context.Background(), "a")
			require.False(t, d.Admitted, "a saturated TAT never admits twice (RL-5)")
			assert.Equal(t, maxD, d.RetryAfter)
			assert.Equal(t, maxD-time.Hour, d.Reset)
			assert.ErrorIs(t, k.Acquire(context.Background(), "a", 1), ratelimit.ErrExceeded)
		}
		r.Cancel()
		assert.Equal(t, 1, keyed.AvailablePermits(k, "a"), "the tail's permit is given back")
		clk.Advance(maxD)
		assert.Equal(t, 2, keyed.AvailablePermits(k, "a"))
	})
	t.Run("near the end of the clock", func(t *testing.T) {
		clk := clock.NewManual()
		clk.AdvanceTo(maxD - 10*time.Second)
		k := newKeyed[int](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Minute), ratelimit.MaxWait(maxD))
		for i := range 5 {
			r, err := k.Reserve(1, 1)
			if i == 0 {
				require.NoError(t, err)
				continue
			}
			require.ErrorIs(t, err, ratelimit.ErrExceeded)
			assert.Positive(t, r.Delay())
		}
		assert.Zero(t, k.Sweep(), "the busy cell is kept")
	})
	t.Run("backend answers", func(t *testing.T) {
		clk := clock.NewManual()
		fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}}
		k := newKeyed[string](t, clk, ratelimit.Permits(10), ratelimit.Period(maxD), ratelimit.WithBackend(fb))
		fb.grant = backend.Grant{Verdict: backend.Refused, Wait: maxD}
		d := k.Decide(context.Background(), "a")
		assert.Equal(t, keyed.Decision{Limit: 10, Period: maxD, RetryAfter: maxD, Reset: maxD}, d, "retry-after + burst saturates")
		fb.grant = backend.Grant{Verdict: backend.Refused, Wait: -time.Second}
		r, err := k.Reserve("a", 1)
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.Zero(t, r.Delay(), "a negative wait is taken as 0")
		fb.grant = backend.Grant{Verdict: backend.Admitted, Wait: maxD, Prev: 0, Next: math.MaxInt64, At: math.MinInt64 + 1}
		d = k.Decide(context.Background(), "a")
		assert.True(t, d.Admitted)
		assert.Equal(t, maxD, d.Reset, "the key's TAT ahead saturates")
		fb.grant = backend.Grant{Verdict: backend.Verdict(99), Wait: time.Second}
		d = k.Decide(context.Background(), "a")
		assert.False(t, d.Admitted, "an unknown outcome is taken as Refused")
		assert.Equal(t, time.Second, d.RetryAfter)
		clk.Advance(maxD / 2)
		assert.Zero(t, k.Sweep(), "a bound cell is kept one Period after its use: until the end of the clock")
	})
}

// A backend whose Bind returns neither a Store nor an error leaves the key in-process,
// with an event, instead of panicking.
func TestKeyed_BackendWithoutStoreFallsBackInProcess(t *testing.T) {
	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}, nilStore: true}
	var events []policy.Event
	k := newKeyed[string](t, clock.NewManual(), ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.WithBackend(fb),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	require.NotPanics(t, func() { assert.Equal(t, 2, keyedAdmitted(k, "a", 10)) })
	require.NotEmpty(t, events)
	assert.Equal(t, backend.EventFailed, events[0].Kind)
	assert.Equal(t, "a", events[0].Key)
}

func ExampleLimiter() {
	clk := clock.NewManual()
	perClient, _ := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second),
		keyed.Bounds(10_000, 0), ratelimit.WithClock(clk))

	for range 10 {
		_ = perClient.TryAcquire("203.0.113.7", 1)
	}
	d := perClient.Decide(context.Background(), "203.0.113.7")
	fmt.Println("11th call admitted:", d.Admitted, "retry after:", d.RetryAfter)
	fmt.Println("another client admitted:", perClient.TryAcquire("198.51.100.4", 1) == nil)

	clk.Advance(d.RetryAfter)
	fmt.Println("after the retry-after:", perClient.TryAcquire("203.0.113.7", 1) == nil)
	// Output:
	// 11th call admitted: false retry after: 100ms
	// another client admitted: true
	// after the retry-after: true
}

// textKey is a named string type, as a user's key type may be.
type textKey string

// A long string of a named type held in a Keyed[any] is bounded as a plain string is
// (fault: only plain strings were), and two named types with the same long text stay two
// keys.
func TestKeyed_NamedStringsInAnyKeysAreBounded(t *testing.T) {
	type otherText string
	const keys, size = 50, 1 << 20
	clk := clock.NewManual()
	k := newKeyed[any](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	buf := make([]byte, size+keys)
	for i := range buf {
		buf[i] = byte(rand.Uint32())
	}
	big := string(buf)
	before := heapInUse()
	for i := range keys {
		require.True(t, k.TryAcquire(textKey(big[i:i+size]), 1) == nil, "key %d", i)
	}
	used := heapInUse() - before
	assert.Less(t, used, int64(keys*1024), "well under 1 KB per key: %d bytes held", used)
	assert.False(t, k.TryAcquire(textKey(big[3:3+size]), 1) == nil, "a long key keeps its quota")
	assert.True(t, k.TryAcquire(otherText(big[3:3+size]), 1) == nil, "the same text in another type is another key")
	assert.True(t, k.TryAcquire(big[3:3+size], 1) == nil, "and so is the plain string")

	// A short named string is kept as it is, and copied: it does not keep alive a larger
	// string it was cut from.
	require.True(t, k.TryAcquire(textKey("short"), 1) == nil)
	assert.False(t, k.TryAcquire(textKey("short"), 1) == nil)
	runtime.KeepAlive(big)
}

// stringerKey is a named string type with a method, held by a key type that asks for it.
type stringerKey string

func (s stringerKey) String() string { return "client " + string(s) }

// A long key of a named string type held by an interface key type with methods
// (Keyed[fmt.Stringer]) is kept as its digest, in its own type, instead of panicking on a
// plain string that is not a fmt.Stringer (fault); so is a key that starts with the
// digest's prefix. Its events name it by the digest (RL-20's keys, MaxKeyBytes).
func TestKeyed_LongKeysOfAnInterfaceTypeWithMethods(t *testing.T) {
	type otherStringer struct{ stringerKey }
	clk := clock.NewManual()
	var events []policy.Event
	k := newKeyed[fmt.Stringer](t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour), keyed.Bounds(0, 8),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	long := stringerKey(strings.Repeat("x", 100))
	require.True(t, k.TryAcquire(long, 1) == nil)
	assert.False(t, k.TryAcquire(long, 1) == nil, "a long key keeps its quota")
	assert.True(t, k.TryAcquire(stringerKey("~sha256:short"), 1) == nil, "a key with the digest's prefix is digested too")
	assert.True(t, k.TryAcquire(otherStringer{long}, 1) == nil, "a key of another type is another key")
	assert.False(t, k.Decide(context.Background(), long).Admitted, "Decide finds the same cell")
	require.NotEmpty(t, events)
	rejected := events[0]
	assert.Equal(t, ratelimit.EventRejected, rejected.Kind)
	assert.Regexp(t, `^client ~sha256:[0-9a-f]{64}$`, rejected.Key, "named by its digest, through its String method")
}

// SPEC RL-9, RL-11: a keyed limiter's Decide, after a call that took a freed slot, reports
// the key's TAT as its reset and counts the freed slots in what remains.
func TestKeyed_RL9_DecideAfterAFreedSlot(t *testing.T) {
	clk := clock.NewManual()
	clk.AdvanceTo(time.Second)
	k := newKeyed[string](t, clk, ratelimit.Permits(3), ratelimit.Period(300*time.Millisecond), ratelimit.MaxWait(time.Second))
	r1, _ := k.Reserve("a", 1)
	for range 3 {
		_, err := k.Reserve("a", 1)
		require.NoError(t, err)
	}
	r1.Cancel() // the TAT stays 400ms ahead; r1's slot is free
	d := k.Decide(context.Background(), "a")
	require.True(t, d.Admitted)
	assert.Equal(t, keyed.AvailablePermits(k, "a"), d.Remaining)
	assert.Zero(t, d.Remaining)
	assert.Equal(t, 400*time.Millisecond, d.Reset)
}

// SPEC RL-17: a keyed limiter takes n permits per key, with the same rules.
func TestKeyed_RL17_WeightedPerKey(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(2*time.Second))
	err := k.TryAcquire("a", 6)
	require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
	assert.Equal(t, 5, keyed.AvailablePermits(k, "a"))
	require.NoError(t, k.TryAcquire("a", 5))
	r, err := k.Reserve("a", 5)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay())
	require.NoError(t, k.Acquire(context.Background(), "b", 5), "another key is untouched")
	assert.ErrorIs(t, k.TryAcquire("b", 1), ratelimit.ErrExceeded)

	r.Cancel() // the tail: its 5 permits come back
	r, err = k.Reserve("a", 5)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay())
}
