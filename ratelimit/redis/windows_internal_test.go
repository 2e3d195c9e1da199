package redis

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// windowsCfg is the configuration of the windows tests: 4 per 2ms, and at most 10 per
// 20ms and 40 per second.
var windowsCfg = ratelimit.Config{Permits: 4, Period: 2 * time.Millisecond, Windows: "10/20ms, 40/1s"}

// windowsList is windowsCfg's Windows as a Request carries them: one slice for every call.
var windowsList = []backend.Window{{Permits: 10, Period: 20 * time.Millisecond}, {Permits: 40, Period: time.Second}}

// decideOn runs one Reserve with the list of windows wins on st as its sender would, at
// windowsCfg's Permits per Period, and returns the grant and the server's clock when
// Redis decided it.
func decideOn(t *testing.T, st *store, wins []backend.Window, n int, maxWait time.Duration) (backend.Grant, int64) {
	t.Helper()
	return decideAt(t, st, windowsCfg, wins, n, maxWait)
}

// decideAt is decideOn at the Permits per Period of cfg.
func decideAt(t *testing.T, st *store, cfg ratelimit.Config, wins []backend.Window, n int, maxWait time.Duration) (backend.Grant, int64) {
	t.Helper()
	req := backend.Request{N: n, MaxWait: maxWait, Permits: cfg.Permits, Period: cfg.Period, Windows: wins}
	w := &waiter{a: st.argsWin(req), mw: int64(maxWait)}
	require.NoError(t, st.decide(context.Background(), []*waiter{w}))
	require.NotZero(t, w.now)
	return w.g, w.now
}

// SPEC RL-29: the same sequence of calls (weights 1 to 4, MaxWait from 0 to 2s,
// cancellations) gives the same answers, step by step, on Redis and in-process: the same
// verdict, the same delay, the same retry-after. The in-process limiter runs on a manual
// clock set, at each step, to the instant Redis decided it (the server's TIME, which the
// script reports), so both decide at the same instants. A reservation is canceled only
// when its permit time is past, or more than 1s ahead, at the last step: the cancel
// reaches Redis a little later than that step's instant, and either way both give back
// the same.
func TestRL29_WindowsSameOnRedisAsInProcess(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run("", func(t *testing.T) {
			_, st := newTestStore(t, windowsCfg)
			clk := clock.NewManual()
			l, err := ratelimit.New(ratelimit.Permits(windowsCfg.Permits), ratelimit.Period(windowsCfg.Period),
				ratelimit.Windows(windowsCfg.Windows), ratelimit.WithClock(clk))
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(seed, 29))
			waits := []time.Duration{0, 0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 2 * time.Second}
			type held struct {
				g   backend.Grant
				res ratelimit.Reservation
			}
			var live []held
			var now0, last int64
			// A limiter brings a new list of windows with each new configuration (here, of
			// MaxWait): the same windows, whose grants still give back.
			wins := slices.Clone(windowsList)
			prevMW := time.Duration(-1)
			admitted, refused, canceled := 0, 0, 0
			for step := range 400 {
				if len(live) > 0 && rng.IntN(4) == 0 {
					i := rng.IntN(len(live))
					h := live[i]
					if h.g.At < last || h.g.At > last+int64(time.Second) {
						st.Cancel(context.Background(), h.g)
						h.res.Cancel()
						live = append(live[:i], live[i+1:]...)
						canceled++
					}
					continue
				}
				n, mw := 1+rng.IntN(4), waits[rng.IntN(len(waits))]
				if mw != prevMW {
					wins, prevMW = slices.Clone(windowsList), mw
				}
				g, now := decideOn(t, st, wins, n, mw)
				if now0 == 0 {
					now0 = now
				}
				last = now
				clk.AdvanceTo(time.Duration(now - now0))
				c := l.Config()
				if c.MaxWait != mw {
					c.MaxWait = mw
					require.NoError(t, l.Reconfigure(c))
				}
				res, err := l.ReserveN(n)
				require.Equal(t, err == nil, g.Verdict == backend.Admitted, "step %d: n=%d maxWait=%v: %v, %+v", step, n, mw, err, g)
				require.Equal(t, res.Delay(), g.Wait, "step %d: n=%d maxWait=%v admitted=%v", step, n, mw, err == nil)
				if err == nil {
					admitted++
					live = append(live, held{g, res})
				} else {
					refused++
				}
			}
			t.Logf("admitted %d, refused %d, canceled %d", admitted, refused, canceled)
			assert.Positive(t, admitted)
			assert.Positive(t, refused)
			assert.Positive(t, canceled)
		})
	}
}

// SPEC RL-29 on Redis: reservations canceled while they are the last ones give their
// permits back on every window; the available permits are the fewest over the windows;
// a refusal's retry-after is the longest wait among them.
func TestRL29_WindowsCancelAndAvailableOnRedis(t *testing.T) {
	// The server's clock runs during the test: periods of seconds keep what it frees
	// between two steps, even on a busy machine, far below one permit of any window.
	cfg := ratelimit.Config{Permits: 4, Period: 2 * time.Second, Windows: "10/20s, 40/1000s"}
	wins := []backend.Window{{Permits: 10, Period: 20 * time.Second}, {Permits: 40, Period: 1000 * time.Second}}
	c, st := newTestStore(t, cfg)
	decide := func(n int, maxWait time.Duration) (backend.Grant, int64) {
		return decideAt(t, st, cfg, wins, n, maxWait)
	}
	ctx := context.Background()
	avail := func() int {
		n, ok := st.Available(ctx, backend.Request{Permits: cfg.Permits, Period: cfg.Period, Windows: wins})
		require.True(t, ok)
		return n
	}
	require.Equal(t, 4, avail())
	keys := st.winsOf(wins).keys
	require.Len(t, keys, 4)
	tats := func() []string {
		var v []string
		for _, k := range keys[2:] {
			v = append(v, c.Get(ctx, k).Val())
		}
		return v
	}
	g, _ := decide(4, 0)
	require.Equal(t, backend.Admitted, g.Verdict)
	before := tats()
	for _, v := range before {
		require.NotEmpty(t, v, "each window's TAT has a key")
	}
	g1, _ := decide(3, 1000*time.Second)
	g2, _ := decide(3, 1000*time.Second)
	require.Equal(t, backend.Admitted, g1.Verdict)
	require.Equal(t, backend.Admitted, g2.Verdict)
	require.Positive(t, g1.Wait)
	assert.NotEqual(t, before, tats())
	st.Cancel(ctx, g2)
	st.Cancel(ctx, g1)
	assert.Equal(t, before, tats(), "every window's TAT moved back to where the first grant left it")
	// 10 per 20s: 4 taken, so at most 6 free on that window; the 4 per 2s were taken.
	assert.LessOrEqual(t, avail(), 4)
	g, _ = decide(4, 1000*time.Second)
	require.Equal(t, backend.Admitted, g.Verdict)
	g, _ = decide(2, 1000*time.Second)
	require.Equal(t, backend.Admitted, g.Verdict)
	// 10 of the 10 per 20s are taken: none is free, whatever the 4 per 2s.
	assert.Zero(t, avail())
	g, _ = decide(1, 0)
	require.Equal(t, backend.Refused, g.Verdict)
	// The 4 per 2s schedule owes 10 permits from the first grant's instant: its wait is 3.5s
	// (less the time the test took); the 20s window's, 2s. The retry-after is the longest.
	assert.Greater(t, g.Wait, 2500*time.Millisecond, "the longest wait, not the 20s window's 2s")
	assert.LessOrEqual(t, g.Wait, 3500*time.Millisecond)
}

// SPEC RL-29: a Reserve with windows allocates no more than one without (see
// TestRL22_SerialDecisionAllocs): the windows' keys and arguments are made once per
// configuration, and the grant's windows' slots are kept in the store's ring.
func TestRL29_WindowsDecisionAllocs(t *testing.T) {
	cfg := ratelimit.Config{Permits: 1_000_000_000, Period: time.Second}
	_, st := newTestStore(t, cfg)
	wins := []backend.Window{{Permits: 1_000_000_000, Period: time.Minute}, {Permits: 1_000_000_000, Period: time.Hour}}
	req := backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period, Windows: wins}
	bg := context.Background()
	_, err := st.Reserve(bg, req) // loads the script
	require.NoError(t, err)
	const runs = 200
	grains := 0
	allocs := testing.AllocsPerRun(runs, func() {
		before := st.b.shared.Load()
		if gr, _ := st.Reserve(bg, req); gr.Verdict != backend.Admitted {
			t.Errorf("outcome %v", gr.Verdict)
		}
		if st.b.shared.Load() != before {
			grains++
		}
	})
	t.Logf("allocs/op: %.0f; %d of %d calls made the shared context", allocs, grains, runs+1)
	assert.LessOrEqual(t, allocs, 6+math.Ceil(6*float64(grains)/runs))
}
