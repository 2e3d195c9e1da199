package keyed_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// tenantLimits is a PerKey function: "gold" 10 per second, "free" 2 per second, any other
// key the limiter's limit.
func tenantLimits(key string) string {
	switch key {
	case "gold":
		return "10/1s"
	case "free":
		return "2/1s"
	}
	return ""
}

// gcraModel is the reference GCRA of one key: Permits per Period, burst Permits.
type gcraModel struct {
	tat, t, tau int64
}

func newModel(permits int, period time.Duration) *gcraModel {
	t := int64(period) / int64(permits)
	return &gcraModel{t: t, tau: int64(permits-1) * t}
}

func (m *gcraModel) take(now int64, n int) bool {
	inc, tol := int64(n)*m.t, int64(n-1)*m.t
	start := max(m.tat, now)
	if start-now > m.tau-tol {
		return false
	}
	m.tat = start + inc
	return true
}

// SPEC KY-1: each key is held to its own limit. Over a random sequence of calls (random
// keys, weights and gaps, on the manual clock), every decision of every key is the one a
// GCRA of that key's own limit makes: gold at 10/s, free at 2/s, others at the limiter's
// 5/s.
func TestKY1_EachKeyHeldToItsOwnLimit(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		clk := clock.NewManual()
		k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.PerKey(tenantLimits))
		models := map[string]*gcraModel{
			"gold": newModel(10, time.Second), "free": newModel(2, time.Second), "other": newModel(5, time.Second),
		}
		limits := map[string]int{"gold": 10, "free": 2, "other": 5}
		keys := []string{"gold", "free", "other"}
		start := clk.Now()
		for i := range 2000 {
			clk.Advance(time.Duration(rng.IntN(150)) * time.Millisecond)
			key := keys[rng.IntN(len(keys))]
			n := 1 + rng.IntN(limits[key])
			now := int64(clk.Now() - start)
			want := models[key].take(now, n)
			got := k.TryAcquire(key, n) == nil
			require.Equal(t, want, got, "seed %d call %d: %s for %d at %v", seed, i, key, n, time.Duration(now))
		}
		d := k.Decide(context.Background(), "gold")
		assert.Equal(t, 10, d.Limit, "Decide reports the key's own limit")
		assert.Equal(t, 2, k.Decide(context.Background(), "free").Limit)
		assert.Equal(t, 5, k.Decide(context.Background(), "other").Limit)
	}
}

// SPEC KY-1: a call for more than the limiter's burst passes for a key whose own burst
// holds it, and one for more than the key's own burst is refused as over the burst,
// taking nothing.
func TestKY1_BurstIsTheKeys(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.PerKey(tenantLimits))
	require.NoError(t, k.TryAcquire("gold", 8), "8 > the limiter's 5, within gold's 10")
	err := k.TryAcquire("free", 3)
	require.ErrorIs(t, err, ratelimit.ErrExceedsBurst, "3 > free's 2")
	require.NotErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 2, keyed.AvailablePermits(k, "free"), "nothing taken")
	require.ErrorIs(t, k.TryAcquire("other", 6), ratelimit.ErrExceedsBurst)
	_, err = k.Reserve("gold", 11)
	require.ErrorIs(t, err, ratelimit.ErrExceedsBurst)
	require.ErrorIs(t, k.Acquire(context.Background(), "gold", 11), ratelimit.ErrExceedsBurst)
	assert.Equal(t, "R4C-ATR-003", r4c.CodeOf(k.TryAcquire("gold", 0)))
}

// SPEC KY-2: SetLimit applies from the key's next call, raising and lowering, carrying
// what the key owes at the new rate; "" puts it back on the limiter's limit.
func TestKY2_SetLimitAppliesOnTheNextCall(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second))
	assert.Equal(t, 2, keyedAdmitted(k, "t", 100), "the limiter's limit")

	require.NoError(t, k.SetLimit("t", "10/1s"))
	// t had spent its whole burst: it has none of the new one free either (as Reconfigure
	// converts), and gets its next permit within one new interval, not one old one.
	assert.Equal(t, 0, keyedAdmitted(k, "t", 100), "what t owed is carried")
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 1, keyedAdmitted(k, "t", 100), "raised: one permit per 100ms, not per 500ms")
	clk.Advance(300 * time.Millisecond)
	assert.Equal(t, 3, keyedAdmitted(k, "t", 100))

	require.NoError(t, k.SetLimit("t", "1/1s"))
	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, 0, keyedAdmitted(k, "t", 100), "lowered: the spent permit is owed at 1/s")
	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, 1, keyedAdmitted(k, "t", 100))
	assert.Equal(t, 1, k.Decide(context.Background(), "t").Limit)

	require.NoError(t, k.SetLimit("t", ""))
	clk.Advance(time.Second)
	assert.Equal(t, 2, keyedAdmitted(k, "t", 100), "back on the limiter's limit")

	require.NoError(t, k.SetLimit("new", "3/1s"), "a key not seen yet gets its cell with the limit")
	assert.Equal(t, 1, k.Len()-1)
	assert.Equal(t, 3, keyedAdmitted(k, "new", 100))

	// A Reconfigure of the limiter leaves a key's own limit.
	require.NoError(t, k.Reconfigure(ratelimit.Config{Permits: 4, Period: time.Second}))
	clk.Advance(2 * time.Second)
	assert.Equal(t, 3, keyedAdmitted(k, "new", 100), "own limit kept")
	assert.Equal(t, 4, keyedAdmitted(k, "t", 100), "the limiter's new limit")

	// Eviction forgets a limit set with SetLimit.
	clk.Advance(time.Hour)
	require.Equal(t, 2, k.Sweep())
	assert.Equal(t, 4, keyedAdmitted(k, "new", 100), "a new cell follows the limiter's limit")
}

// SPEC KY-3: bad limits. SetLimit returns the error and changes nothing; a PerKey answer
// that is not a limit leaves the key on the limiter's limit and publishes
// EventLimitRefused with its code; a PerKey function of another key type fails New.
func TestKY3_BadLimits(t *testing.T) {
	clk := clock.NewManual()
	var mu sync.Mutex
	var events []policy.Event
	k := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.OnEvent(func(e policy.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}),
		keyed.PerKey(func(key string) string { return key }))
	for text, code := range map[string]string{
		"ten/1s": "R4C-ATR-005", "0/1s": "R4C-ATR-003", "1/0s": "R4C-ATR-002", "10/5ns": "R4C-REG-001",
		"1/1s, 2/1m, 3/1h, 4/2h, 5/3h": "R4C-ATR-007", "1/1s, 1000/24h": "R4C-REG-010", ",": "R4C-ATR-005",
	} {
		err := k.SetLimit("x", text)
		assert.Equal(t, code, r4c.CodeOf(err), "SetLimit(%q)", text)
		events = nil
		assert.Equal(t, 2, keyedAdmitted(k, text, 100), "%q: the key follows the limiter's limit", text)
		require.NotEmpty(t, events, text)
		assert.Equal(t, ratelimit.EventLimitRefused, events[0].Kind)
		assert.Equal(t, code, r4c.CodeOf(events[0].Err), "%q", text)
		assert.Equal(t, text, events[0].Key)
	}

	_, err := keyed.New[int](ratelimit.Permits(1), ratelimit.Period(time.Second), keyed.PerKey(tenantLimits))
	assert.Equal(t, "R4C-REG-010", r4c.CodeOf(err), "a PerKey function of another key type")
	var zero keyed.Limiter[string]
	assert.Error(t, zero.SetLimit("a", "1/1s"))
}

// bytesPerKey returns the heap that a limiter of opts holds per key at its bound of
// 50,000 keys, each having taken a permit.
func bytesPerKey(t *testing.T, opts ...ratelimit.Option) float64 {
	const n = 50_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("client-%d", i)
	}
	before := heapInUse()
	k, err := keyed.New[string](append([]ratelimit.Option{ratelimit.Permits(10), ratelimit.Period(time.Hour),
		keyed.Bounds(n, 0)}, opts...)...)
	require.NoError(t, err)
	for _, key := range keys {
		_ = k.TryAcquire(key, 1)
	}
	after := heapInUse()
	require.Equal(t, n, k.Len())
	runtime.KeepAlive(k)
	runtime.KeepAlive(keys)
	return float64(after-before) / n
}

// SPEC KY-4: a key on the limiter's limit costs no more with PerKey (its function giving
// "") than without.
func TestKY4_MemoryPerKeyOnTheDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds limiters of 50,000 keys")
	}
	dflt := bytesPerKey(t, keyed.PerKey(func(string) string { return "" }))
	plain := bytesPerKey(t)
	t.Logf("bytes per key: %.1f without PerKey, %.1f on the default with PerKey", plain, dflt)
	assert.InDelta(t, plain, dflt, plain*0.05, "a key on the limiter's limit costs what it did")
}

// SPEC KY-4: a key with its own limit costs one more allocation of 48 bytes (the rate is
// shared by the keys given the same text).
func TestKY4_MemoryPerKeyWithItsOwnLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds limiters of 50,000 keys")
	}
	own := bytesPerKey(t, keyed.PerKey(func(string) string { return "20/1h" }))
	plain := bytesPerKey(t)
	t.Logf("bytes per key: %.1f without PerKey, %.1f with an own limit", plain, own)
	assert.InDelta(t, plain+48, own, 8, "a key with its own limit costs its freed set, 48 bytes, more")
}

// A call for a key with its own limit allocates nothing, as one on the limiter's does.
func TestKY4_OwnLimitAllocatesNothing(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Millisecond), keyed.PerKey(tenantLimits))
	require.NoError(t, k.TryAcquire("gold", 1))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		clk.Advance(time.Millisecond)
		_ = k.TryAcquire("gold", 1)
		_ = k.TryAcquire("gold", 3)
		k.Decide(context.Background(), "gold")
	}))
}

// SPEC KY-2 under the race detector: SetLimit, calls, Sweep and Reconfigure running
// together; every key ends held to the limit last set.
func TestKY2_SetLimitRace(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.Bounds(64, 0),
		keyed.PerKey(tenantLimits))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				key := "k" + strconv.Itoa(i%9)
				switch (i + w) % 5 {
				case 0:
					_ = k.SetLimit(key, strconv.Itoa(1+i%7)+"/1s")
				case 1:
					_, _ = k.Reserve(key, 1)
				case 2:
					k.Decide(context.Background(), key)
				default:
					_ = k.TryAcquire(key, 1)
				}
				if i%500 == 0 {
					k.Sweep()
					_ = k.Reconfigure(ratelimit.Config{Permits: 5 + i%3, Period: time.Second})
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			clk.Advance(10 * time.Millisecond)
		}
	})
	wg.Wait()
	for i := range 9 {
		key := "k" + strconv.Itoa(i)
		require.NoError(t, k.SetLimit(key, "3/1s"))
	}
	clk.Advance(time.Hour)
	for i := range 9 {
		assert.Equal(t, 3, keyedAdmitted(k, "k"+strconv.Itoa(i), 100))
	}
}

// SPEC KY-1 with windows and with a backend: a key's own further windows hold on a limiter
// built with windows; with a backend, each key's store is asked at the key's own rate and
// windows.
func TestKY1_OwnWindowsAndBackend(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Windows("100/1h"),
		keyed.PerKey(func(key string) string {
			if key == "capped" {
				return "10/1s, 12/1h"
			}
			return ""
		}))
	total := 0
	for range 10 {
		total += keyedAdmitted(k, "capped", 100)
		clk.Advance(time.Second)
	}
	assert.Equal(t, 12, total, "the key's own hourly window of 12")
	d := k.Decide(context.Background(), "capped")
	assert.Equal(t, "12/1h", d.Windows)
	assert.Equal(t, 10, d.Limit)
	assert.Equal(t, "100/1h", k.Decide(context.Background(), "other").Windows)

	fb := &fakeBackend{bound: map[string]int{}, stores: map[string]*fakeStore{}}
	kb := newKeyed[string](t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.WithBackend(fb),
		keyed.PerKey(tenantLimits))
	assert.Equal(t, 10, keyedAdmitted(kb, "gold", 100), "the store decides at gold's 10/s")
	assert.Equal(t, 2, keyedAdmitted(kb, "free", 100))
	assert.Equal(t, 2, keyedAdmitted(kb, "x", 100))
	require.NoError(t, kb.SetLimit("plat", "1/1s, 2/1h"), "a backend's store keeps a key's own windows")
	total = 0
	for range 10 {
		total += keyedAdmitted(kb, "plat", 100)
		clk.Advance(time.Second)
	}
	assert.Equal(t, 2, total, "the store decides at plat's own windows: 2 an hour")
}

// DecideN takes n permits at once, or none; more than the key's burst is refused with no
// retry-after, and its Limit tells the burst.
func TestKY1_DecideN(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.PerKey(tenantLimits))
	d := k.DecideN(context.Background(), "gold", 7)
	assert.True(t, d.Admitted)
	assert.Equal(t, 3, d.Remaining)
	assert.Equal(t, time.Second, d.Period)
	d = k.DecideN(context.Background(), "gold", 4)
	assert.False(t, d.Admitted)
	assert.Equal(t, 100*time.Millisecond, d.RetryAfter)
	d = k.DecideN(context.Background(), "free", 3)
	assert.Equal(t, keyed.Decision{Limit: 2, Period: time.Second}, d, "over free's burst of 2")
	assert.Equal(t, 2, keyed.AvailablePermits(k, "free"), "nothing taken")
	assert.False(t, k.DecideN(context.Background(), "free", 0).Admitted)
}

// A disabled limiter with per-key limits lets 1 to its own burst pass, as without them.
func TestKY1_DisabledKeepsItsBurst(t *testing.T) {
	k := newKeyed[string](t, clock.NewManual(), ratelimit.Permits(2), ratelimit.Period(time.Second),
		ratelimit.Enabled(false), keyed.PerKey(tenantLimits))
	require.NoError(t, k.TryAcquire("gold", 2))
	require.ErrorIs(t, k.TryAcquire("gold", 3), ratelimit.ErrExceedsBurst)
}

// SPEC KY-2 with windows: SetLimit keeps the TAT of a further window that the new limit
// keeps too (the same pair), as Reconfigure does, so what the key spent of it stays spent.
func TestKY2_SetLimitKeepsTheWindowsItKeeps(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Windows("8/1h"))
	assert.Equal(t, 5, keyedAdmitted(k, "w", 100))
	clk.Advance(time.Second)
	require.NoError(t, k.SetLimit("w", "10/1s, 8/1h"))
	assert.Equal(t, 3, keyedAdmitted(k, "w", 100), "3 left of the hour's 8, the pair kept")
	d := k.Decide(context.Background(), "w")
	assert.Equal(t, 10, d.Limit)
	assert.Equal(t, "8/1h", d.Windows)
	require.NoError(t, k.SetLimit("w", "10/1s"))
	clk.Advance(time.Second)
	assert.Equal(t, 10, keyedAdmitted(k, "w", 100), "no hourly window any more")
}

// SPEC KY-1 and SH-1: shadow mode is the limiter's, also for a key with a limit of its own,
// whose rate was made before shadow mode was switched on: its would-be refusals (over its
// own quota, over its own burst) are let through and counted, and switching shadow off
// again refuses them.
func TestKY1_ShadowModeIsTheLimiters(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed[string](t, clk, ratelimit.Permits(5), ratelimit.Period(time.Second), keyed.PerKey(tenantLimits))
	require.NoError(t, k.TryAcquire("free", 2), "free's own burst of 2")
	require.Error(t, k.TryAcquire("free", 1))
	cfg := k.Config()
	cfg.Shadow = true
	require.NoError(t, k.Reconfigure(cfg))
	assert.NoError(t, k.TryAcquire("free", 1), "over free's quota, let through")
	assert.NoError(t, k.TryAcquire("free", 3), "over free's burst, let through")
	assert.True(t, k.Decide(context.Background(), "free").Admitted)
	assert.True(t, k.DecideN(context.Background(), "free", 3).Admitted)
	res, err := k.Reserve("free", 1)
	require.NoError(t, err)
	assert.Zero(t, res.Delay())
	assert.Equal(t, uint64(5), k.ShadowRejected())
	cfg.Shadow = false
	require.NoError(t, k.Reconfigure(cfg))
	assert.Error(t, k.TryAcquire("free", 1))
	assert.False(t, k.DecideN(context.Background(), "free", 3).Admitted)
	assert.Equal(t, uint64(5), k.ShadowRejected())
}
