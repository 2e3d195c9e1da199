package redis

// Coalescing: the Reserves of one store that come while one of its script runs is in
// flight go together in the next run, each decided exactly as alone.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// gate holds the client's first `hold` script commands until the test releases each, and
// counts the script commands sent (each one round trip). fail, when set, is the error the
// held commands end with instead of reaching Redis.
type gate struct {
	hold    int32
	fail    error
	seen    atomic.Int32
	entered chan []any // the held command's arguments
	release chan struct{}
}

func newGate(hold int32) *gate {
	return &gate{hold: hold, entered: make(chan []any, 8), release: make(chan struct{})}
}

func (g *gate) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (g *gate) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		if n := g.seen.Add(1); n <= g.hold {
			g.entered <- slices.Clone(cmd.Args())
			<-g.release
			if g.fail != nil && n > 1 {
				cmd.SetErr(g.fail)
				return g.fail
			}
		}
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// gatedStore returns a store for cfg on the tests' server whose client goes through g.
func gatedStore(t *testing.T, g *gate, cfg ratelimit.Config, opts ...Option) *store {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(t), DB: scheduleDB, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	// Loaded before the gate counts: a server whose scripts were flushed (as another
	// test does) would otherwise answer the first EVALSHA with NOSCRIPT, and EVAL follow.
	require.NoError(t, script.Load(context.Background(), c).Err())
	c.AddHook(g)
	b, err := New(c, append([]Option{Prefix(UniquePrefix(t)), Timeout(5 * time.Second)}, opts...)...)
	require.NoError(t, err)
	st, err := b.Bind(backend.Binding{ID: "s", Clock: clock.NewManual()})
	require.NoError(t, err)
	return st.(*store)
}

// queued waits until n Reserves wait in st's queue.
func queued(t *testing.T, st *store, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return len(st.queue) == n
	}, 5*time.Second, time.Millisecond)
}

type answer struct {
	g   backend.Grant
	err error
}

// reserveAsync runs st.Reserve on its own goroutine; its answer comes on the channel.
func reserveAsync(ctx context.Context, st *store, req backend.Request) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		g, err := st.Reserve(ctx, req)
		ch <- answer{g, err}
	}()
	return ch
}

// RL-22, RL-23: while a Reserve is in flight, the Reserves that come queue and go together in
// one script run (one round trip); each gets exactly the answer it would get alone, in
// their order: with Permits k, exactly k of a burst are reserved, and the slots of the
// reservations follow one another with no gap and no overlap, T each; the refused ones'
// retry-after is the one of the schedule they found.
func TestRL22_ConcurrentReservesGoTogetherAndEachIsExact(t *testing.T) {
	const permits, callers = 5, 12
	cfg := ratelimit.Config{Permits: permits, Period: 5000 * time.Hour} // T = 1000h
	T := int64(gcra.Interval(cfg.Permits, cfg.Period))
	g := newGate(1)
	st := gatedStore(t, g, cfg)
	ctx := context.Background()
	first := reserveAsync(ctx, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
	<-g.entered // the first is in flight, alone
	var rest []<-chan answer
	for range callers - 1 {
		rest = append(rest, reserveAsync(ctx, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period}))
		queued(t, st, len(rest))
	}
	close(g.release)
	answers := []answer{<-first}
	for _, ch := range rest {
		answers = append(answers, <-ch)
	}
	assert.Equal(t, int32(2), g.seen.Load(), "the first alone, then the 11 queued in one run")

	var tokens []backend.Grant
	var waits []time.Duration
	for _, a := range answers {
		require.NoError(t, a.err)
		switch a.g.Verdict {
		case backend.Admitted:
			assert.Zero(t, a.g.Wait, "within the burst")
			tokens = append(tokens, a.g)
		case backend.Refused:
			waits = append(waits, a.g.Wait)
		default:
			t.Fatalf("outcome %v", a.g.Verdict)
		}
	}
	require.Len(t, tokens, permits, "exactly the burst")
	require.Len(t, waits, callers-permits)
	slices.SortFunc(tokens, func(a, b backend.Grant) int { return cmp.Compare(a.Prev, b.Prev) })
	for i := 1; i < len(tokens); i++ {
		assert.Equal(t, tokens[i-1].Next, tokens[i].Prev, "slot %d starts where %d ends", i, i-1)
		assert.Equal(t, T, tokens[i].Next-tokens[i].Prev, "slot %d is T", i)
	}
	// The queued ones were decided at one now: the TAT was 5T ahead of the first's now,
	// so a refused call's retry-after is T less the time between the two runs (< 1h).
	for _, w := range waits[1:] {
		assert.Equal(t, waits[0], w, "refused at one now, against one TAT")
	}
	assert.InDelta(t, float64(T), float64(waits[0]), float64(time.Hour))
}

// RL-22: a lone Reserve is sent at once, alone: one round trip, no wait for others.
func TestRL22_LoneReserveGoesAlone(t *testing.T) {
	cfg := ratelimit.Config{Permits: 3, Period: 3 * time.Hour}
	g := newGate(0)
	st := gatedStore(t, g, cfg)
	for i := range 4 {
		gr, err := st.Reserve(context.Background(), backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
		require.NoError(t, err)
		assert.Equal(t, i < 3, gr.Verdict == backend.Admitted, "call %d", i)
		assert.Equal(t, int32(i+1), g.seen.Load())
	}
}

// RL-22: the sender answers a run and lets its callers go before it takes the next, so
// that callers that call again at once join it: 8 callers, each calling 20 times in a row,
// take 21 runs, the first alone and then one per round of all 8. One P makes this exact:
// a caller that has its answer runs until it waits again, queued (with several Ps a caller
// that runs on another P may still be on its way when the sender takes the next run).
func TestRL22_CallersThatCallAgainJoinTheNextRun(t *testing.T) {
	const callers, rounds = 8, 20
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cfg := ratelimit.Config{Permits: callers * (rounds + 1), Period: time.Hour}
	req := backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period}
	g := newGate(1)
	st := gatedStore(t, g, cfg)
	ctx := context.Background()
	var wg sync.WaitGroup
	admitted := make([]int, callers)
	call := func(i int) {
		defer wg.Done()
		for range rounds {
			gr, err := st.Reserve(ctx, req)
			if err == nil && gr.Verdict == backend.Admitted {
				admitted[i]++
			}
		}
	}
	wg.Add(callers)
	go call(0)
	<-g.entered // the first call is in flight, alone
	for i := 1; i < callers; i++ {
		go call(i)
		queued(t, st, i)
	}
	close(g.release)
	wg.Wait()
	for i, n := range admitted {
		assert.Equal(t, rounds, n, "caller %d", i)
	}
	assert.Equal(t, int32(rounds+1), g.seen.Load(), "the first call alone, then one run per round of all callers")
	assert.Zero(t, st.waking.Load(), "every answered caller took its answer")
}

// RL-24: a queued caller whose ctx ends while its batch is in flight stops waiting with
// ctx's error; the permit the batch reserved for it is given back (here a freed slot,
// since a reservation stands behind it), and the next call takes it.
func TestRL24_CallerThatLeavesGivesItsPermitBack(t *testing.T) {
	cfg := ratelimit.Config{Permits: 3, Period: 3000 * time.Hour} // T = 1000h
	g := newGate(2)
	st := gatedStore(t, g, cfg)
	bg := context.Background()
	first := reserveAsync(bg, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
	<-g.entered
	ctx, cancel := context.WithCancel(bg)
	leaving := reserveAsync(ctx, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
	queued(t, st, 1)
	staying := reserveAsync(bg, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
	queued(t, st, 2)
	g.release <- struct{}{} // the first's run
	require.Equal(t, backend.Admitted, (<-first).g.Verdict)
	args := <-g.entered // the batch of two is in flight
	require.Len(t, args, cmdHeader+1+10, "one group of requests alike in one run")
	assert.Equal(t, int64(2), args[len(args)-4], "of two requests")
	cancel()
	a := <-leaving
	assert.ErrorIs(t, a.err, context.Canceled)
	assert.Zero(t, a.g)
	g.release <- struct{}{}
	require.Equal(t, backend.Admitted, (<-staying).g.Verdict)
	// The give-back runs after the answers: wait for it (a third script run).
	require.Eventually(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return !st.busy && g.seen.Load() == 3
	}, 5*time.Second, time.Millisecond)
	n, ok := st.Available(bg, backend.Request{Permits: cfg.Permits, Period: cfg.Period})
	require.True(t, ok)
	assert.Equal(t, 1, n, "the leaver's permit is free again")
	gr, err := st.Reserve(bg, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
	require.NoError(t, err)
	assert.Equal(t, backend.Admitted, gr.Verdict)
	gr, err = st.Reserve(bg, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
	require.NoError(t, err)
	assert.Equal(t, backend.Refused, gr.Verdict, "and no more than it")
}

// RL-25: when a batch's run fails, every caller in it gets the failure policy's answer,
// as if its own call had failed.
func TestRL25_FailedBatchTakesTheFailurePolicyForEveryCaller(t *testing.T) {
	for _, tc := range []struct {
		policy backend.Verdict
		want   backend.Verdict
	}{{backend.Refused, backend.Refused}, {backend.Admitted, backend.Admitted}, {backend.Local, backend.Local}} {
		t.Run(fmt.Sprint(tc.policy), func(t *testing.T) {
			cfg := ratelimit.Config{Permits: 5, Period: 5 * time.Second}
			g := newGate(2)
			g.fail = errors.New("connection reset by peer")
			st := gatedStore(t, g, cfg, OnFailure(tc.policy))
			bg := context.Background()
			first := reserveAsync(bg, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period})
			<-g.entered
			var rest []<-chan answer
			for i := range 3 {
				rest = append(rest, reserveAsync(bg, st, backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period}))
				queued(t, st, i+1)
			}
			g.release <- struct{}{}
			assert.Equal(t, backend.Admitted, (<-first).g.Verdict, "the first's run succeeds")
			<-g.entered
			g.release <- struct{}{} // the batch's run fails
			for _, ch := range rest {
				a := <-ch
				require.NoError(t, a.err)
				assert.Equal(t, tc.want, a.g.Verdict)
				if tc.policy == backend.Refused {
					assert.Equal(t, gcra.Interval(cfg.Permits, cfg.Period), a.g.Wait, "backend.Refused's retry-after is T")
				}
			}
			assert.NotNil(t, st.b.down.of(st.b.nodeOf(st.keys[0]).name), "the node is down")
		})
	}
}

// RL-22: a serial decision allocates at most 6 times: the command and its reply (2), the
// client's connection check (3, which github.com/go-redis/redis_rate's Allow pays too),
// and its deadline (1); and, once per grain of the timeout (Timeout/16, at most 1ms), the
// first call of the grain makes the context that the calls of the grain share (at most
// 6 more: the context, its timer, their functions, its channel). A lone Reserve allocates nothing for
// coalescing. redis_rate's Allow makes 19 to 22 allocations and 672 B: the bench module's
// TestRedisAllocsPerDecision measures both in one test.
func TestRL22_SerialDecisionAllocs(t *testing.T) {
	cfg := ratelimit.Config{Permits: 1_000_000_000, Period: time.Second}
	_, st := newTestStore(t, cfg)
	req := backend.Request{N: 1, Permits: cfg.Permits, Period: cfg.Period}
	bg := context.Background()
	_, err := st.Reserve(bg, req) // loads the script
	require.NoError(t, err)
	const runs = 200
	grains := 0 // the calls that made a shared context (AllocsPerRun makes runs+1 calls)
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

// RL-5: limiters of three processes (three clients, three backends), two plain and one
// keyed, all on one key and each called by several goroutines at once (so their calls
// coalesce), admit together no more than GCRA allows on the server's clock: Permits +
// floor(elapsed/T) + 1 over the time the calls took, elapsed measured on the server
// (TIME before the first call, after the last), + 1 for the first call's permit at the
// start of the window (SPEC RL-5).
func TestRL5_ThreeClientsShareOneExactQuota(t *testing.T) {
	const permits, period = 20, 200 * time.Millisecond // T = 10ms
	prefix := UniquePrefix(t)
	var limiters []func() bool
	var admin *goredis.Client
	for i := range 3 {
		c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(t), DB: scheduleDB, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.Ping(context.Background()).Err())
		admin = c
		b, err := New(c, Prefix(prefix), Timeout(5*time.Second), OnFailure(backend.Refused))
		require.NoError(t, err)
		if i < 2 {
			l, err := ratelimit.New(ratelimit.Name("api:k"), ratelimit.Permits(permits), ratelimit.Period(period),
				ratelimit.WithBackend(b))
			require.NoError(t, err)
			limiters = append(limiters, l.TryAcquire)
			continue
		}
		k, err := keyed.New[string](ratelimit.Name("api"), ratelimit.Permits(permits), ratelimit.Period(period),
			ratelimit.WithBackend(b))
		require.NoError(t, err)
		limiters = append(limiters, func() bool { return k.TryAcquire("k", 1) == nil })
	}
	serverNow := func() time.Time {
		now, err := admin.Time(context.Background()).Result()
		require.NoError(t, err)
		return now
	}
	var admitted, calls atomic.Int64
	start := serverNow()
	stop := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	for _, l := range limiters {
		for range 6 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					calls.Add(1)
					if l() {
						admitted.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := serverNow().Sub(start)
	T := period / permits
	bound := int64(permits) + int64(elapsed/T) + 1
	t.Logf("admitted %d of %d calls in %v; bound %d", admitted.Load(), calls.Load(), elapsed, bound)
	assert.LessOrEqual(t, admitted.Load(), bound)
	assert.GreaterOrEqual(t, admitted.Load(), int64(permits), "at least the burst")
}

// presetKeys gives st's keys a TAT at tat and the freed slots, in ns since the epoch on
// the server's clock, each pair [from, to).
func presetKeys(t *testing.T, c *goredis.Client, st *store, tat int64, freed ...[2]int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, st.keys[0], strconv.FormatInt(tat, 10), time.Hour).Err())
	if len(freed) == 0 {
		return
	}
	var parts []string
	for _, f := range freed {
		parts = append(parts, slot(f[0], f[1]))
	}
	require.NoError(t, c.Set(ctx, st.keys[1], strings.Join(parts, " "), time.Hour).Err())
}

// RL-23: a batch is decided exactly as the same calls one after the other: requests alike
// in a row go as one group, and the script answers runs of them (slots taken in freed
// slots one by one, a run appended at the TAT, a run refused); each caller's grant (its
// outcome, and the slot and permit time of its reservation) is the one it gets alone, in
// that order, and the keys are left the same. The TAT is far ahead, so that every grant
// waits and its slot and permit time do not depend on now; the refused ones' retry-after
// does, by the time between the two runs (T is 1000h, so a second is nothing to it).
// (Fault: a run's reservations after the first took the first one's slot, or a refusal
// ended more than its own group.)
func TestRL23_BatchEqualsTheSameCallsOneByOne(t *testing.T) {
	cfg := ratelimit.Config{Permits: 4, Period: 4000 * time.Hour} // T = 1000h
	T := int64(gcra.Interval(cfg.Permits, cfg.Period))
	c, batched := newTestStore(t, cfg)
	_, serial := newTestStore(t, cfg)
	serial.keys = []string{batched.keys[0] + ":serial", batched.keys[0] + ":serial" + freedSuffix}
	serial.keyArgs = [2]any{serial.keys[0], serial.keys[1]}
	now, err := c.Time(context.Background()).Result()
	require.NoError(t, err)
	now0 := now.UnixNano()
	// The TAT at 12T; freed slots [5T, 6T) and [7T, 9T).
	for _, st := range []*store{batched, serial} {
		presetKeys(t, c, st, now0+12*T, [2]int64{now0 + 5*T, now0 + 6*T}, [2]int64{now0 + 7*T, now0 + 9*T})
	}
	type call struct {
		n       int
		maxWait time.Duration
	}
	long := 20 * time.Duration(T)
	calls := []call{
		{1, long}, {1, long}, {1, long}, {1, long}, {1, long}, {1, long}, // 3 freed, then 3 at the TAT
		{1, 5 * time.Duration(T)}, {1, 5 * time.Duration(T)}, // refused: they would wait 12T
		{3, long}, // at the TAT, 3T
		{1, long}, // at the TAT
		{2, 0},    // refused
		{1, long}, // at the TAT
	}
	var batch []*waiter
	for _, cl := range calls {
		batch = append(batch, &waiter{a: batched.argsOf(cfg.Permits, cfg.Period, cl.n), mw: int64(cl.maxWait)})
	}
	require.NoError(t, batched.decide(context.Background(), batch))
	for i, cl := range calls {
		want := reserve(t, serial, cfg, cl.n, cl.maxWait)
		got := batch[i].g
		require.Equal(t, want.Verdict, got.Verdict, "call %d", i)
		if want.Verdict == backend.Admitted {
			assert.Equal(t, slotOf(want), slotOf(got), "call %d: the same slot and permit time", i)
		}
		assert.InDelta(t, float64(want.Wait), float64(got.Wait), float64(time.Second), "call %d", i)
	}
	// The slots, in order: the freed ones first, each T, then the TAT's.
	slots := [][2]int64{{5, 6}, {7, 8}, {8, 9}, {12, 13}, {13, 14}, {14, 15}}
	for i, s := range slots {
		assert.Equal(t, [2]int64{now0 + s[0]*T, now0 + s[1]*T}, [2]int64{batch[i].g.Prev, batch[i].g.Next}, "slot %d", i)
	}
	assert.Equal(t, [4]int64{now0 + 15*T, now0 + 18*T, now0 + 15*T - T, 0}, slotOf(batch[8].g),
		"3 permits at the TAT: free (Permits-3)·T before their slot")
	bTAT, bFreed := tat(t, c, batched)
	sTAT, sFreed := tat(t, c, serial)
	assert.Equal(t, now0+20*T, bTAT)
	assert.Equal(t, sTAT, bTAT, "the same TAT")
	assert.Equal(t, sFreed, bFreed, "the same freed slots")
	assert.Empty(t, bFreed, "all taken")
}

// RL-23: when the freed-slots key turns out to be a data error only at a later request of
// a batch (the TAT was behind now, so the first did not read it), the ones before keep
// their answers, written, and the rest get the data error, as each would alone: the
// failure policy, the key marked bad, the freed-slots key never overwritten.
func TestRL23_BadFreedSlotsFoundAtALaterRequest(t *testing.T) {
	cfg := ratelimit.Config{Permits: 3, Period: 3 * time.Hour}
	c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(t), DB: scheduleDB, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	b, err := New(c, Prefix(UniquePrefix(t)), Timeout(5*time.Second), OnFailure(backend.Refused))
	require.NoError(t, err)
	s, err := b.Bind(backend.Binding{ID: "s", Clock: clock.NewManual()})
	require.NoError(t, err)
	st := s.(*store)
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	require.NoError(t, err)
	require.NoError(t, c.Set(ctx, st.keys[0], strconv.FormatInt(now.UnixNano()-int64(time.Minute), 10), time.Hour).Err())
	require.NoError(t, c.Set(ctx, st.keys[1], "not slots", time.Hour).Err())
	batch := []*waiter{{a: st.argsOf(cfg.Permits, cfg.Period, 1)}, {a: st.argsOf(cfg.Permits, cfg.Period, 1)}, {a: st.argsOf(cfg.Permits, cfg.Period, 1)}}
	require.NoError(t, st.decide(ctx, batch))
	assert.Equal(t, backend.Admitted, batch[0].g.Verdict, "the first appended: the TAT was behind now")
	for _, w := range batch[1:] {
		assert.Equal(t, backend.Grant{Verdict: backend.Refused, Wait: gcra.Interval(cfg.Permits, cfg.Period)}, w.g, "backend.Refused")
	}
	assert.NotNil(t, st.keyBad.Load(), "the keys are bad")
	v, freed := tat(t, c, st)
	assert.Equal(t, batch[0].g.Next, v, "the first one's reservation is written")
	assert.Equal(t, "not slots", freed, "never overwritten")
}

// RL-26: a call of the limiter's own (context.Background(), with a client that bounds its
// own I/O) sends and reads with exactly the timeout as its deadline; what ends it (its
// Done), shared by the calls whose deadlines fall in one grain (Timeout/16, at most 1ms),
// ends at most a grain before that deadline, never after; the calls of one grain share
// it, so that a call allocates no timer of its own (one allocation: its deadline); and
// once it has ended, no goroutine and no timer is left. (Fault: the shared end was
// rounded up, so that a call could wait up to 1ms past the timeout.)
func TestRL26_OwnCallsNeverOutliveTheTimeout(t *testing.T) {
	before := goleak.IgnoreCurrent()
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}) // never contacted
	const timeout = 40 * time.Millisecond
	b, err := New(c, Timeout(timeout))
	require.NoError(t, err)
	require.Equal(t, time.Millisecond, b.grain, "min(Timeout/16, 1ms)")

	start := time.Now()
	ctx, cancel := b.bound(context.Background())
	after := time.Now()
	cancel()
	dl, ok := ctx.Deadline()
	require.True(t, ok)
	assert.False(t, dl.Before(start.Add(timeout)), "exactly the timeout from the call's start")
	assert.False(t, dl.After(after.Add(timeout)))
	end, ok := b.shared.Load().ctx.Deadline()
	require.True(t, ok)
	assert.False(t, end.After(dl), "its end never after its deadline")
	assert.True(t, end.After(dl.Add(-b.grain)), "and less than a grain before it")
	require.NoError(t, ctx.Err())

	// The calls of one grain share their end.
	for {
		c1, _ := b.bound(context.Background())
		c2, _ := b.bound(context.Background())
		if b1, b2 := c1.(*ownCall), c2.(*ownCall); b1.Context == b2.Context {
			assert.NotEqual(t, b1.at, b2.at, "each its own deadline")
			break
		}
	}
	allocs := testing.AllocsPerRun(1000, func() { _, _ = b.bound(context.Background()) })
	assert.Equal(t, 1.0, allocs, "its deadline; no timer of its own")

	last := b.shared.Load().ctx
	<-last.Done() // its timer fires at its deadline, on the real clock
	assert.ErrorIs(t, last.Err(), context.DeadlineExceeded)
	require.NoError(t, c.Close())
	goleak.VerifyNone(t, before)
}

// RL-26: a call that brings its own ctx, or a client that does not bound its own I/O, gets
// a context of its own, exactly the timeout, which ends with the caller's ctx and keeps
// its values.
func TestRL26_CallerContextGetsItsOwnDeadline(t *testing.T) {
	type key struct{}
	for _, enabled := range []bool{true, false} {
		c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: enabled})
		b, err := New(c, Timeout(time.Hour))
		require.NoError(t, err)
		parent, stop := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		ctx, cancel := b.bound(parent)
		assert.Equal(t, "v", ctx.Value(key{}))
		stop()
		<-ctx.Done()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		cancel()
		ctx, cancel = b.bound(context.Background())
		_, own := ctx.(*ownCall)
		assert.Equal(t, enabled, own, "shared only with a client that bounds its own I/O")
		dl, _ := ctx.Deadline()
		assert.InDelta(t, float64(time.Hour), float64(time.Until(dl)), float64(time.Minute))
		cancel()
		require.NoError(t, c.Close())
	}
}

// RL-22, RL-24: callers that leave while others are answered never share a waiter: under
// a mix of weights, waits, callers whose contexts end at once or mid-run, cancellations and
// reads, every call returns (a waiter handed to its caller is never touched again by the
// sender, who could otherwise pool it twice and leave two calls on one waiter).
func TestRL22_MixedCallersAllReturn(t *testing.T) {
	cfg := ratelimit.Config{Permits: 50, Period: 50 * time.Millisecond}
	_, st := newTestStore(t, cfg)
	var wg sync.WaitGroup
	for w := range 24 {
		wg.Go(func() {
			for i := range 400 {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if (w+i)%3 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%7)*50*time.Microsecond)
				}
				gr, err := st.Reserve(ctx, backend.Request{N: 1 + (w+i)%3, MaxWait: time.Duration(i%4) * time.Millisecond, Permits: cfg.Permits, Period: cfg.Period})
				cancel()
				if err == nil && gr.Verdict == backend.Admitted && i%5 == 0 {
					st.Cancel(context.Background(), gr)
				}
				if i%11 == 0 {
					st.Available(context.Background(), backend.Request{Permits: cfg.Permits, Period: cfg.Period})
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		st.mu.Lock()
		busy, queued := st.busy, len(st.queue)
		st.mu.Unlock()
		t.Fatalf("callers hang: busy %v, %d queued", busy, queued)
	}
}

// slotOf returns what identifies a reserved grant: its slot, its permit time and its
// epoch.
func slotOf(g backend.Grant) [4]int64 { return [4]int64{g.Prev, g.Next, g.At, g.Epoch} }
