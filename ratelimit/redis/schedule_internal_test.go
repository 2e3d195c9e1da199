package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
)

// The store's schedule, read exactly: every Reserved grant carries its slot and its permit
// time on the server's clock (the Grant), so these tests check the script's arithmetic to the
// nanosecond, whatever the real time the test takes, as long as each scenario runs within
// the waits it builds (checked with require, as the other tests on the real clock do).

// scheduleDB is the database of these tests, as the package's other tests (not 0, which
// other packages' tests may flush).
const scheduleDB = 7

// newTestStore returns a store of its own for cfg on the tests' server, with a key prefix
// of t's own and a generous timeout (a loaded machine is not Redis failing).
func newTestStore(t *testing.T, cfg ratelimit.Config) (*goredis.Client, *store) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(t), DB: scheduleDB, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, c.Ping(ctx).Err())
	b, err := New(c, Prefix(UniquePrefix(t)), Timeout(5*time.Second))
	require.NoError(t, err)
	st, err := b.Bind(backend.Binding{ID: "s"})
	require.NoError(t, err)
	return c, st.(*store)
}

// reserve asks st for n permits within maxWait at the rate of cfg.
func reserve(t *testing.T, st *store, cfg ratelimit.Config, n int, maxWait time.Duration) backend.Grant {
	t.Helper()
	g, err := st.Reserve(context.Background(), backend.Request{N: n, MaxWait: maxWait, Permits: cfg.Permits, Period: cfg.Period})
	require.NoError(t, err)
	return g
}

// reserved reserves n permits, which must be granted, and returns what identifies them:
// the grant's slot, permit time and epoch.
func reserved(t *testing.T, st *store, cfg ratelimit.Config, n int, maxWait time.Duration) backend.Grant {
	t.Helper()
	g := reserve(t, st, cfg, n, maxWait)
	require.Equal(t, backend.Admitted, g.Verdict, "%d permits", n)
	return backend.Grant{Prev: g.Prev, Next: g.Next, At: g.At, Epoch: g.Epoch}
}

// tat reads the store's TAT key (0 when absent) and its freed slots.
func tat(t *testing.T, c *goredis.Client, st *store) (int64, string) {
	t.Helper()
	ctx := context.Background()
	var v int64
	s, err := c.Get(ctx, st.keys[0]).Result()
	if err == goredis.Nil {
		s, err = "0", nil
	}
	require.NoError(t, err)
	v, err = TATOf(s)
	require.NoError(t, err)
	f, err := c.Get(ctx, st.keys[1]).Result()
	if err == goredis.Nil {
		f, err = "", nil
	}
	require.NoError(t, err)
	return v, f
}

// slot is a freed slot as the freed-slots key holds it: "start-end" in seconds since the
// epoch, with 9 decimals.
func slot(from, to int64) string {
	return fmt.Sprintf("%d.%09d-%d.%09d", from/1e9, from%1e9, to/1e9, to%1e9)
}

const ms = int64(time.Millisecond)

// 5 permits per second (T = 200ms): 5 permits at once take the whole burst, and 5 more
// within 2s are free exactly 1s later (the TAT moved by 5·T, the wait is TAT - now -
// (5-5)·T). A request for more than Permits is refused by the store without a round trip.
// (SPEC RL-1, RL-7 with weights.)
func TestWeighted_WholeBurstThenOneSecond(t *testing.T) {
	cfg := ratelimit.Config{Permits: 5, Period: time.Second}
	onTime(t, func(int) bool {
		c, st := newTestStore(t, cfg)
		start := time.Now()
		first := reserved(t, st, cfg, 5, 0)
		n, ok := st.Available(context.Background(), backend.Request{Permits: cfg.Permits, Period: cfg.Period})
		refused := reserve(t, st, cfg, 5, 0)
		second := reserved(t, st, cfg, 5, 2*time.Second)
		elapsed := time.Since(start)
		if elapsed >= 800*time.Millisecond {
			return false
		}
		assert.Zero(t, first.Prev, "a fresh key")
		now0 := first.At
		assert.Equal(t, now0+1000*ms, first.Next, "the TAT moved by 5·T")
		require.True(t, ok)
		assert.Zero(t, n)
		assert.Equal(t, backend.Refused, refused.Verdict)
		between(t, refused.Wait, time.Second-elapsed, time.Second, "the retry-after of 5 permits")
		assert.Equal(t, backend.Grant{Prev: now0 + 1000*ms, Next: now0 + 2000*ms, At: now0 + 1000*ms}, second,
			"5 more permits exactly 1s after the first 5")

		v, _ := tat(t, c, st)
		assert.Equal(t, backend.Grant{Verdict: backend.Refused}, reserve(t, st, cfg, 6, time.Hour),
			"more than Permits: never, no retry-after")
		assert.Equal(t, backend.Grant{Verdict: backend.Refused}, reserve(t, st, cfg, 0, time.Hour))
		after, _ := tat(t, c, st)
		assert.Equal(t, v, after, "nothing taken")
		return true
	})
}

// 20 permits per 2s (T = 100ms, burst 2s): 15 permits at once; then 10 are free 500ms
// after them, and 2 more 700ms after them: with the calls made 100ms and 200ms after the
// first, the waits are 400ms and 500ms. Canceling the 10 (the 2 stand behind them) leaves
// their slot [1.5s, 2.5s) free: 5 permits fit there at once, and 5 more 500ms after the
// first call, before any later slot; the next single permit goes to the TAT. (SPEC RL-7,
// RL-9a with weights.)
func TestWeighted_ScheduleAndExactCancel(t *testing.T) {
	cfg := ratelimit.Config{Permits: 20, Period: 2 * time.Second}
	ctx := context.Background()
	onTime(t, func(int) bool {
		c, st := newTestStore(t, cfg)
		start := time.Now()
		g15 := reserved(t, st, cfg, 15, 0)
		g10 := reserved(t, st, cfg, 10, time.Second)
		g2 := reserved(t, st, cfg, 2, time.Second)
		canceled := st.cancel(ctx, g10)
		v, freed := tat(t, c, st)
		n, ok := st.Available(ctx, backend.Request{Permits: cfg.Permits, Period: cfg.Period})
		nAt := time.Since(start)
		a := reserve(t, st, cfg, 5, 0)
		b := reserve(t, st, cfg, 5, 0)
		b5 := reserve(t, st, cfg, 5, time.Second)
		_, freedAfter := tat(t, c, st)
		one := reserve(t, st, cfg, 1, time.Second)
		elapsed := time.Since(start)
		if elapsed >= 400*time.Millisecond {
			return false
		}
		now0 := g15.At
		assert.Equal(t, now0+1500*ms, g15.Next)
		assert.Equal(t, backend.Grant{Prev: now0 + 1500*ms, Next: now0 + 2500*ms, At: now0 + 500*ms}, g10,
			"10 permits: slot [1.5s, 2.5s), free at 2.5s - 20·T")
		assert.Equal(t, backend.Grant{Prev: now0 + 2500*ms, Next: now0 + 2700*ms, At: now0 + 700*ms}, g2,
			"2 permits: slot [2.5s, 2.7s), free at 2.7s - 20·T")

		require.True(t, canceled, "a reservation with a later one behind it gives its slot back")
		assert.Equal(t, now0+2700*ms, v, "the later reservation keeps its turn")
		assert.Equal(t, slot(now0+1500*ms, now0+2500*ms), freed)
		require.True(t, ok)
		assert.GreaterOrEqual(t, n, 5, "single permits of the freed slot ending by now + 2s")
		assert.LessOrEqual(t, n, 5+int(nAt/(100*time.Millisecond)))

		require.Equal(t, backend.Admitted, a.Verdict, "5 permits at once in the freed slot")
		assert.Zero(t, a.Wait)
		assert.Equal(t, []int64{now0 + 1500*ms, now0 + 2000*ms}, []int64{a.Prev, a.Next}, "the freed slot's start")
		require.Equal(t, backend.Refused, b.Verdict, "the rest of the slot is 500ms away")
		between(t, b.Wait, 500*time.Millisecond-elapsed, 500*time.Millisecond, "the retry-after: the freed slot's")
		require.Equal(t, backend.Admitted, b5.Verdict)
		assert.Equal(t, [4]int64{now0 + 2000*ms, now0 + 2500*ms, now0 + 500*ms, 0}, slotOf(b5),
			"the rest of the slot, before the TAT")
		assert.Empty(t, freedAfter, "the freed slot is used up")
		require.Equal(t, backend.Admitted, one.Verdict)
		assert.Equal(t, [4]int64{now0 + 2700*ms, now0 + 2800*ms, now0 + 800*ms, 0}, slotOf(one), "at the TAT")
		return true
	})
}

// A freed slot is taken before the TAT by the first reservation it holds; a slot too
// short for a reservation is left for a smaller one. Canceling the last reservation
// moves the TAT back over it and over a freed slot that then ends at the TAT, so the TAT
// walks back as the reservations behind it are canceled. (SPEC RL-9, RL-9a.)
func TestRL9a_FreedSlotsAndTheTail(t *testing.T) {
	cfg := ratelimit.Config{Permits: 4, Period: 4 * time.Second} // T = 1s, burst 4s
	c, st := newTestStore(t, cfg)
	ctx := context.Background()
	const s = int64(time.Second)
	burst := reserved(t, st, cfg, 4, 0)
	now0 := burst.At
	a := reserved(t, st, cfg, 1, time.Hour)  // [4s, 5s)
	b := reserved(t, st, cfg, 2, time.Hour)  // [5s, 7s)
	cc := reserved(t, st, cfg, 1, time.Hour) // [7s, 8s)
	assert.Equal(t, []int64{now0 + 5*s, now0 + 7*s, now0 + 8*s}, []int64{a.Next, b.Next, cc.Next})

	require.True(t, st.cancel(ctx, b))
	v, freed := tat(t, c, st)
	assert.Equal(t, now0+8*s, v)
	assert.Equal(t, slot(now0+5*s, now0+7*s), freed)
	pttl, err := c.PTTL(ctx, st.keys[1]).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, pttl, 7*time.Second, "the freed slots expire when the last one ends")
	assert.Greater(t, pttl, 6*time.Second)

	d := reserved(t, st, cfg, 1, time.Hour)
	assert.Equal(t, backend.Grant{Prev: now0 + 5*s, Next: now0 + 6*s, At: now0 + 2*s}, d, "the freed slot, before the TAT")
	e := reserved(t, st, cfg, 2, time.Hour)
	assert.Equal(t, backend.Grant{Prev: now0 + 8*s, Next: now0 + 10*s, At: now0 + 6*s}, e,
		"[6s, 7s) cannot hold 2 permits: at the TAT")
	_, freed = tat(t, c, st)
	assert.Equal(t, slot(now0+6*s, now0+7*s), freed)

	require.True(t, st.cancel(ctx, e), "the tail")
	v, _ = tat(t, c, st)
	assert.Equal(t, now0+8*s, v)
	require.True(t, st.cancel(ctx, cc), "the tail again: back over [7s, 8s), then over the freed [6s, 7s)")
	v, freed = tat(t, c, st)
	assert.Equal(t, now0+6*s, v)
	assert.Empty(t, freed)
	assert.Zero(t, c.Exists(ctx, st.keys[1]).Val())
	require.True(t, st.cancel(ctx, d), "d ends at the TAT now: the tail")
	v, _ = tat(t, c, st)
	assert.Equal(t, now0+5*s, v)
	assert.False(t, st.cancel(ctx, d), "a token past the TAT gives nothing back")
	assert.False(t, st.cancel(ctx, backend.Grant{Prev: now0, Next: now0 + 5*s, At: now0 - 1}), "its time has passed")
	v, _ = tat(t, c, st)
	assert.Equal(t, now0+5*s, v)
}

// At most maxFreed freed slots are kept: a canceled reservation that would make one more,
// touching none, gives nothing back; one that touches a kept slot joins it. The earliest
// freed slot is taken first.
func TestRL9a_FreedSlotsAreBounded(t *testing.T) {
	cfg := ratelimit.Config{Permits: 1, Period: time.Second}
	c, st := newTestStore(t, cfg)
	ctx := context.Background()
	toks := make([]backend.Grant, 2*maxFreed+4)
	for i := range toks {
		toks[i] = reserved(t, st, cfg, 1, time.Hour)
	}
	for i := 1; i < 2*maxFreed; i += 2 {
		require.True(t, st.cancel(ctx, toks[i]), "slot %d", i)
	}
	assert.False(t, st.cancel(ctx, toks[2*maxFreed+1]), "one slot more than maxFreed")
	require.True(t, st.cancel(ctx, toks[2*maxFreed]), "touches the last kept slot: joins it")
	_, freed := tat(t, c, st)
	spans := strings.Fields(freed)
	require.Len(t, spans, maxFreed)
	assert.Equal(t, slot(toks[2*maxFreed-1].Prev, toks[2*maxFreed].Next), spans[maxFreed-1])
	g := reserved(t, st, cfg, 1, time.Hour)
	assert.Equal(t, toks[1].Prev, g.Prev, "the earliest freed slot")
	assert.Equal(t, toks[1].Next, g.Next)
}

// A limiter reconfigured while it runs: the new rate applies from the next call, which
// converts the schedule. 10 per second (T = 100ms) spends its burst and 5 permits more;
// the next permits are 100ms apart; at 20 per second (T = 50ms) the 17 permits owed, 1.7s
// at the old T less the time c since the first grant, are owed at 50ms: the TAT is at
// 1.35s + c/2, the next permits come 50ms apart, and 2 permits take 100ms. The key still
// expires at the TAT. (SPEC RC-1, RC-7.)
func TestReconfigure_NewRateFromTheNextCall(t *testing.T) {
	slow := ratelimit.Config{Permits: 10, Period: time.Second}
	fast := ratelimit.Config{Permits: 20, Period: time.Second}
	ctx := context.Background()
	onTime(t, func(int) bool {
		c, st := newTestStore(t, slow)
		start := time.Now()
		half := reserved(t, st, slow, 5, 0)
		nSlow, okSlow := st.Available(ctx, backend.Request{Permits: slow.Permits, Period: slow.Period})
		nAt := time.Since(start)
		reserved(t, st, slow, 5, 0)
		reserved(t, st, slow, 5, time.Second)
		p0 := reserved(t, st, slow, 1, time.Second)
		p1 := reserved(t, st, slow, 1, time.Second)
		p2 := reserved(t, st, fast, 1, time.Second)
		p3 := reserved(t, st, fast, 1, time.Second)
		p4 := reserved(t, st, fast, 2, time.Second)
		v, _ := tat(t, c, st)
		pttl, err := c.PTTL(ctx, st.keys[0]).Result()
		require.NoError(t, err)
		n, ok := st.Available(ctx, backend.Request{Permits: fast.Permits, Period: fast.Period})
		elapsed := time.Since(start)
		if elapsed >= 500*time.Millisecond {
			return false
		}
		now0 := half.At
		// The TAT is 500ms ahead: 5 permits at T = 100ms (one more for each T of real time
		// the test took).
		require.True(t, okSlow)
		assert.GreaterOrEqual(t, nSlow, 5)
		assert.LessOrEqual(t, nSlow, 5+int(nAt/(100*time.Millisecond)))

		assert.Equal(t, []int64{now0 + 600*ms, now0 + 700*ms}, []int64{p0.At, p1.At}, "100ms apart at 10 per second")
		assert.Equal(t, []int64{p0.Epoch, p0.Epoch}, []int64{p1.Epoch, p2.Epoch - 1}, "one conversion, at the first call at 20 per second")
		half2 := p2.At - now0 - 400*ms // c/2: half the time from the first grant to the conversion
		assert.GreaterOrEqual(t, half2, int64(0))
		assert.LessOrEqual(t, half2, int64(elapsed/2))
		assert.Equal(t, []int64{p2.At + 50*ms, p3.At + 100*ms}, []int64{p3.At, p4.At}, "50ms apart at 20 per second; 2 permits: 2·T more")
		assert.Equal(t, p4.At+1000*ms, v, "the TAT: (Permits - 2)·T + 2·T after the last permit")
		assert.LessOrEqual(t, pttl, time.Duration(v-now0), "expires at the TAT")
		assert.Greater(t, pttl, time.Duration(v-now0)-elapsed-time.Millisecond)
		require.True(t, ok)
		assert.Zero(t, n)
		return true
	})
}

// SPEC RL-5 with weights and cancellation, on the server's clock: random reservations of
// 1 to Permits permits and random cancellations; the permits still held (those never
// canceled, or whose cancel gave nothing back) hold disjoint slots, each inside
// [at, at + Permits·T), and every window [at_i, at_j] holds at most
// Permits + floor((at_j - at_i)/T) of them.
func TestRL5_WindowBoundWithWeightsAndCancels(t *testing.T) {
	// T = 100µs, about a round trip: the schedule moves on as the test runs.
	cfg := ratelimit.Config{Permits: 8, Period: 800 * time.Microsecond}
	_, st := newTestStore(t, cfg)
	ctx := context.Background()
	T := int64(gcra.Interval(cfg.Permits, cfg.Period))
	B := int64(cfg.Permits) * T
	type held struct {
		n   int
		tok backend.Grant
	}
	var standing []held
	rng := rand.New(rand.NewPCG(1, 2))
	canceled, refilled, last := 0, 0, int64(0)
	for range 3000 {
		if len(standing) > 0 && rng.IntN(3) == 0 {
			// One of the latest: most of them are still to come, so the cancel gives back.
			i := max(len(standing)-1-rng.IntN(8), 0)
			if st.cancel(ctx, standing[i].tok) {
				standing = slices.Delete(standing, i, i+1)
				canceled++
			}
			continue
		}
		n := 1 + rng.IntN(cfg.Permits)
		g := reserve(t, st, cfg, n, time.Duration(rng.IntN(40)*int(T)))
		if g.Verdict == backend.Admitted {
			standing = append(standing, held{n, g})
			if g.Next < last {
				refilled++ // a freed slot, before the latest one granted
			}
			last = max(last, g.Next)
		}
	}
	t.Logf("%d reservations held, %d canceled, %d in freed slots", len(standing), canceled, refilled)
	require.Positive(t, canceled)
	require.Positive(t, refilled)
	type span struct{ from, to int64 }
	var spans []span
	for _, h := range standing {
		// The slot starts at the later of prev and the call's now: at - wait.
		to := h.tok.Next
		from := to - int64(h.n)*T
		assert.GreaterOrEqual(t, from, h.tok.At, "the slot starts at or after the permit")
		assert.LessOrEqual(t, to, h.tok.At+B, "and ends at most Permits·T after it")
		spans = append(spans, span{from, to})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.from - b.from) })
	for i := 1; i < len(spans); i++ {
		assert.LessOrEqual(t, spans[i-1].to, spans[i].from, "slots are disjoint")
	}
	slices.SortFunc(standing, func(a, b held) int { return int(a.tok.At - b.tok.At) })
	for i := range standing {
		sum := 0
		for j := i; j < len(standing); j++ {
			sum += standing[j].n
			d := standing[j].tok.At - standing[i].tok.At
			require.LessOrEqual(t, sum, cfg.Permits+int(d/T), "window [%d, %d]", i, j)
		}
	}
}

// between asserts lo < d <= hi.
func between(t *testing.T, d, lo, hi time.Duration, msg string) {
	t.Helper()
	assert.Greater(t, d, lo, msg)
	assert.LessOrEqual(t, d, hi, msg)
}

// onTime runs run, a scenario on the real clock, until one run takes no longer than the
// waits it builds, at most 3 times: run returns false, before asserting anything that
// depends on it, when it was too slow (a loaded machine descheduled it past a permit's
// time). Each run makes a store of its own.
func onTime(t *testing.T, run func(attempt int) bool) {
	t.Helper()
	for attempt := range 3 {
		if run(attempt) {
			return
		}
		t.Logf("run %d took longer than its waits: again", attempt)
	}
	t.Fatal("no run within its waits in 3 attempts")
}
