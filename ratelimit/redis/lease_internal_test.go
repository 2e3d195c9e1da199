package redis

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// admission is one permit admission seen by a store: its time on the server's clock
// (Redis TIME, the wall clock), its weight, and whether a lease decided it.
type admission struct {
	at     int64
	n      int
	leased bool
	key    string
}

// recorder collects the admissions of the backends it hooks, on one clock: the server's.
// A leased admission's time is the process's clock (clock.System, time since its origin)
// moved to the wall clock, which Redis TIME reads on this machine.
type recorder struct {
	mu   sync.Mutex
	off  int64
	list []admission
}

func newRecorder() *recorder {
	return &recorder{off: time.Now().UnixNano() - int64(clock.System().Now())}
}

func (r *recorder) hook(key string, at int64, leased bool, n int) {
	if leased {
		at += r.off
	}
	r.mu.Lock()
	r.list = append(r.list, admission{at: at, n: n, leased: leased, key: key})
	r.mu.Unlock()
}

func (r *recorder) all() []admission {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.list)
	slices.SortFunc(out, func(a, b admission) int { return int(a.at - b.at) })
	return out
}

// over returns by how many permits the worst interval [a, a+d] of the sorted admissions
// exceeds permits + floor(d/t) (0: never), counting weights.
func over(list []admission, permits int, t int64) int {
	worst := 0
	for i := range list {
		sum := 0
		for j := i; j < len(list); j++ {
			sum += list[j].n
			if ex := sum - permits - int((list[j].at-list[i].at)/t); ex > worst {
				worst = ex
			}
		}
	}
	return worst
}

// leaseClient returns a client of the shared server, or of the cluster, closed when t
// ends; nil (t skipped) without one.
func leaseClient(t *testing.T, cluster bool) goredis.Scripter {
	t.Helper()
	if cluster {
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: redistest.ClusterAddrs(t), ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c := goredis.NewClient(&goredis.Options{Addr: redistest.Addr(t), DB: scheduleDB, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// leased returns a backend with leases of life, on a client of its own, hooked to rec.
func leased(t *testing.T, cluster bool, prefix string, life time.Duration, rec *recorder) *Backend {
	t.Helper()
	b, err := New(leaseClient(t, cluster), Prefix(prefix), Leases(life), Timeout(2*time.Second))
	require.NoError(t, err)
	if rec != nil {
		b.admitHook = rec.hook
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func leasePrefix(t *testing.T) string {
	return "r4ctest:" + t.Name() + ":" + time.Now().Format("150405.000000000") + ":"
}

// onBoth runs f on the server and on the cluster.
func onBoth(t *testing.T, f func(t *testing.T, cluster bool)) {
	t.Run("server", func(t *testing.T) { f(t, false) })
	t.Run("cluster", func(t *testing.T) { f(t, true) })
}

// SPEC LS-1, LS-2, RL-5: three instances (backends on clients of their own, one prefix)
// share one limiter with leases, each from 4 goroutines: TryAcquire, TryAcquireN(2),
// and Acquire with MaxWait. Every admission, leased or decided on Redis, is put on the
// server's clock: no interval [a, a+d] ever holds more than Permits + floor(d/T)
// permits, with further windows too (each window's bound), whatever the scheduling.
func TestLS1_LeasesNeverExceedTheBound(t *testing.T) {
	onBoth(t, func(t *testing.T, cluster bool) {
		for _, wins := range []string{"", "30/6s"} {
			t.Run("windows="+wins, func(t *testing.T) {
				prefix, rec := leasePrefix(t), newRecorder()
				const permits, period = 20, 2 * time.Second
				var bs []*Backend
				var wg sync.WaitGroup
				stop := make(chan struct{})
				for range 3 {
					b := leased(t, cluster, prefix, time.Second, rec)
					bs = append(bs, b)
					opts := []ratelimit.Option{ratelimit.Name("shared"), ratelimit.Permits(permits), ratelimit.Period(period),
						ratelimit.MaxWait(300 * time.Millisecond), ratelimit.WithBackend(b)}
					if wins != "" {
						opts = append(opts, ratelimit.Windows(wins))
					}
					l, err := ratelimit.New(opts...)
					require.NoError(t, err)
					for g := range 4 {
						wg.Go(func() {
							for {
								select {
								case <-stop:
									return
								default:
								}
								switch g {
								case 0, 1:
									_ = l.TryAcquire()
								case 2:
									_ = l.TryAcquireN(2)
								default:
									ctx, cancel := context.WithTimeout(context.Background(), time.Second)
									_ = l.Acquire(ctx)
									cancel()
								}
							}
						})
					}
				}
				time.Sleep(3 * time.Second) // the load's duration
				close(stop)
				wg.Wait()
				list := rec.all()
				var n, nl int
				for _, a := range list {
					n += a.n
					if a.leased {
						nl += a.n
					}
				}
				t.Logf("%d permits admitted, %d of them leased", n, nl)
				assert.Zero(t, over(list, permits, int64(period/permits)), "Permits + floor(d/T)")
				if wins != "" {
					assert.Zero(t, over(list, 30, int64(200*time.Millisecond)), "the window's bound")
				}
				assert.Positive(t, nl, "leases were used")
				var st LeaseStats
				for _, b := range bs {
					require.NoError(t, b.Close())
					s := b.Leases()
					st.Leased, st.Used, st.Returned, st.Wasted = st.Leased+s.Leased, st.Used+s.Used, st.Returned+s.Returned, st.Wasted+s.Wasted
				}
				t.Logf("leases: %+v", st)
				assert.Equal(t, int64(nl), st.Used, "every leased admission is counted")
				assert.Equal(t, st.Leased, st.Used+st.Returned+st.Wasted)
			})
		}
	})
}

// commandCounter counts the commands a client sends.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// SPEC LS-3: under saturation (two instances calling TryAcquire as fast as they can, far
// over the quota), the instances send Redis at most 1 command per 20 decisions, and still
// admit about the quota, never over its bound.
func TestLS3_SaturationCostsFewCommands(t *testing.T) {
	onBoth(t, func(t *testing.T, cluster bool) {
		prefix, rec := leasePrefix(t), newRecorder()
		const permits, period = 100, time.Second
		var cmds commandCounter
		var decisions atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 2 {
			c := leaseClient(t, cluster)
			c.(interface{ AddHook(goredis.Hook) }).AddHook(&cmds)
			b, err := New(c, Prefix(prefix), Leases(time.Second), Timeout(2*time.Second))
			require.NoError(t, err)
			b.admitHook = rec.hook
			t.Cleanup(func() { _ = b.Close() })
			l, err := ratelimit.New(ratelimit.Name("hot"), ratelimit.Permits(permits), ratelimit.Period(period), ratelimit.WithBackend(b))
			require.NoError(t, err)
			for range 3 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						_ = l.TryAcquire()
						decisions.Add(1)
					}
				})
			}
		}
		time.Sleep(3 * time.Second) // the load's duration
		close(stop)
		wg.Wait()
		list := rec.all()
		n := 0
		for _, a := range list {
			n += a.n
		}
		d, c := decisions.Load(), cmds.n.Load()
		t.Logf("%d decisions, %d commands (1 per %d), %d admitted", d, c, d/max(c, 1), n)
		assert.LessOrEqual(t, c*20, d, "at most 1 command per 20 decisions")
		assert.Zero(t, over(list, permits, int64(period/permits)))
		assert.GreaterOrEqual(t, n, 200, "about the quota (100 + 3s·100/s = 400) is admitted")
	})
}

// forceLease reserves a lease of k permits for st at once, as its background run would.
func forceLease(t *testing.T, st *store, req backend.Request, k int) *lease {
	t.Helper()
	require.True(t, st.lz.busy.CompareAndSwap(false, true))
	req.N, req.MaxWait = k, st.b.cfg.Lease
	st.reserveLease(req)
	l := st.lz.cur.Load()
	require.NotNil(t, l, "a lease")
	return l
}

func bindStore(t *testing.T, b *Backend, name string) *store {
	t.Helper()
	st, err := b.Bind(backend.Binding{ID: name})
	require.NoError(t, err)
	return st.(*store)
}

// SPEC LS-5: what a lease holds goes back to Redis on Close, and when its life ends
// unused (its limiter's rate fell): a store without leases then finds the whole burst
// free again.
func TestLS5_LeasesGoBackOnCloseAndAtTheEndOfTheirLife(t *testing.T) {
	onBoth(t, func(t *testing.T, cluster bool) {
		prefix := leasePrefix(t)
		req := backend.Request{Permits: 20, Period: 2 * time.Second}
		plain, err := New(leaseClient(t, cluster), Prefix(prefix))
		require.NoError(t, err)
		probe := bindStore(t, plain, "x")
		ctx := context.Background()

		b := leased(t, cluster, prefix, time.Hour, nil)
		st := bindStore(t, b, "x")
		forceLease(t, st, req, 10)
		n, ok := probe.Available(ctx, req)
		require.True(t, ok)
		assert.Equal(t, 10, n, "the lease holds 10 slots")
		g, err := st.Reserve(ctx, backend.Request{N: 1, Permits: 20, Period: 2 * time.Second})
		require.NoError(t, err)
		require.Equal(t, backend.Admitted, g.Verdict)
		require.NoError(t, b.Close())
		n, _ = probe.Available(ctx, req)
		// Slot 0 started when the lease was reserved (the schedule was idle): it passed
		// unused. Slot 1 was used, and Close gave back the 8 others.
		assert.Equal(t, 18, n, "Close gave back the 8 slots not used")
		assert.Equal(t, LeaseStats{Leases: 1, Leased: 10, Used: 1, Returned: 8, Wasted: 1}, b.Leases())

		// A life of 300ms, and no call: the lease goes back when its life ends.
		b2 := leased(t, cluster, prefix+"life:", 300*time.Millisecond, nil)
		st2 := bindStore(t, b2, "y")
		plain2, err := New(leaseClient(t, cluster), Prefix(prefix+"life:"))
		require.NoError(t, err)
		p2 := bindStore(t, plain2, "y")
		forceLease(t, st2, req, 10)
		n, _ = p2.Available(ctx, req)
		assert.LessOrEqual(t, n, 11)
		require.Eventually(t, func() bool {
			n, _ := p2.Available(ctx, req)
			return n == 20
		}, 3*time.Second, 20*time.Millisecond, "the slots come back at the end of the lease's life")
		ls := b2.Leases()
		assert.GreaterOrEqual(t, ls.Returned, int64(5), "the slots that had not started at 300ms")
		assert.Equal(t, int64(10), ls.Returned+ls.Wasted)
	})
}

// leaseBehindABurst returns a store with no lease (other) and a leased one (st, of
// backend b) on one name at 20 permits per 2s, whose whole burst other took: st's forced
// lease l of 10 permits starts 2s ahead, each slot free 100ms after the one before; req
// is a call for 1 permit that may wait 1s.
func leaseBehindABurst(t *testing.T) (other *store, b *Backend, st *store, req backend.Request, l *lease) {
	t.Helper()
	prefix := leasePrefix(t)
	plain, err := New(leaseClient(t, false), Prefix(prefix))
	require.NoError(t, err)
	other = bindStore(t, plain, "x")
	g, _ := other.Reserve(context.Background(), backend.Request{N: 20, Permits: 20, Period: 2 * time.Second})
	require.Equal(t, backend.Admitted, g.Verdict)
	b = leased(t, false, prefix, time.Hour, nil)
	st = bindStore(t, b, "x")
	req = backend.Request{N: 1, Permits: 20, Period: 2 * time.Second, MaxWait: time.Second}
	return other, b, st, req, forceLease(t, st, req, 10)
}

// SPEC LS-6: a leased reservation that is canceled gives its slot back: to the lease when
// it is the latest taken from it, else to Redis, exactly.
func TestLS6_CanceledLeasedReservationsGiveBack(t *testing.T) {
	ctx := context.Background()
	other, b, st, req, l := leaseBehindABurst(t)
	g1, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g1.Verdict)
	assert.Positive(t, g1.Wait)
	st.Cancel(ctx, g1)
	assert.Equal(t, int64(0), l.cursor.Load(), "the latest goes back to the lease")
	g1, _ = st.Reserve(ctx, req)
	g2, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g2.Verdict)
	assert.Equal(t, g1.Next, g2.Prev)
	st.Cancel(ctx, g1) // not the latest: to Redis, as a freed slot
	assert.Equal(t, int64(2), l.cursor.Load())
	g4, _ := st.Reserve(ctx, backend.Request{N: 1, Permits: 20, Period: 2 * time.Second}) // no wait: refused, slot 2 not due
	assert.Equal(t, backend.Refused, g4.Verdict)
	require.NoError(t, b.Close())
	assert.Equal(t, LeaseStats{Leases: 1, Leased: 10, Used: 1, Returned: 9}, b.Leases())
	// Close gave back slots 2..9: the TAT moved back to the end of g2's slot 1; slot 0,
	// freed, is taken first.
	g3, _ := other.Reserve(ctx, backend.Request{N: 1, Permits: 20, Period: 2 * time.Second, MaxWait: 3 * time.Second})
	require.Equal(t, backend.Admitted, g3.Verdict)
	assert.Equal(t, g1.Prev, g3.Prev, "the canceled slot is taken first")
}

// SPEC LS-7: a lease holder that dies (its lease neither used nor given back): the
// others never exceed the bound, and get the whole quota again within one life.
func TestLS7_DeadHolderCostsAtMostItsLease(t *testing.T) {
	onBoth(t, func(t *testing.T, cluster bool) {
		prefix, rec := leasePrefix(t), newRecorder()
		const permits, period, life = 20, 2 * time.Second, time.Second
		req := backend.Request{Permits: permits, Period: period}
		dead := leased(t, cluster, prefix, life, rec)
		st := bindStore(t, dead, "shared")
		l := forceLease(t, st, req, 10)
		l.timer.Stop()
		st.unset(l) // killed: the lease is never used, nor given back
		t0 := time.Now().UnixNano()

		b := leased(t, cluster, prefix, life, rec)
		lim, err := ratelimit.New(ratelimit.Name("shared"), ratelimit.Permits(permits), ratelimit.Period(period), ratelimit.WithBackend(b))
		require.NoError(t, err)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 3 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = lim.TryAcquire()
				}
			})
		}
		time.Sleep(4 * time.Second) // the load's duration
		close(stop)
		wg.Wait()
		list := rec.all()
		assert.Zero(t, over(list, permits, int64(period/permits)))
		late := 0
		for _, a := range list {
			if a.at >= t0+int64(life) && a.at < t0+int64(life)+int64(2*time.Second) {
				late += a.n
			}
		}
		t.Logf("%d in the 2s after one life; leases %+v", late, b.Leases())
		// The quota's rate is 10/s: 20 in the 2s after one life, less a slot or two at the
		// edges, and what a loaded machine's delays cost.
		if !assert.GreaterOrEqual(t, late, 16, "the quota after one life") {
			for _, a := range list {
				t.Logf("%v %d leased=%v", time.Duration(a.at-t0), a.n, a.leased)
			}
		}
	})
}

// SPEC LS-8: a keyed limiter leases its hot keys; a cold key stays per call.
func TestLS8_KeyedHotKeyLeasedColdKeyPerCall(t *testing.T) {
	rec := newRecorder()
	b := leased(t, false, leasePrefix(t), time.Second, rec)
	// 200 per second: the hot key's caller offers far more, even on a loaded machine or
	// with the race detector, so its quota is soon booked ahead.
	k, err := keyed.New[string](ratelimit.Name("api"), ratelimit.Permits(200), ratelimit.Period(time.Second),
		ratelimit.WithBackend(b))
	require.NoError(t, err)
	end := time.Now().Add(1500 * time.Millisecond)
	var last time.Time
	for time.Now().Before(end) {
		_ = k.TryAcquire("hot", 1)
		if time.Since(last) > 600*time.Millisecond { // 1 per 600ms: fewer than 2 per life
			last = time.Now()
			require.NoError(t, k.TryAcquire("cold", 1))
		}
	}
	var hl, hc, cl, cc int
	for _, a := range rec.all() {
		switch {
		case a.key == "hot" && a.leased:
			hl++
		case a.key == "hot":
			hc++
		case a.leased:
			cl++
		default:
			cc++
		}
	}
	t.Logf("hot: %d leased, %d per call; cold: %d leased, %d per call", hl, hc, cl, cc)
	assert.Greater(t, hl, 100, "the hot key is leased (once its burst, per call, is spent)")
	assert.Zero(t, cl, "the cold key is not")
	assert.Equal(t, 3, cc)
}

// capture is a backend that keeps the store it binds.
type capture struct {
	*Backend
	st *store
}

func (c *capture) Bind(bd backend.Binding) (backend.Store, error) {
	st, err := c.Backend.Bind(bd)
	c.st, _ = st.(*store)
	return st, err
}

// SPEC LS-9: a decision from a lease allocates nothing.
func TestLS9_LeasedDecisionAllocatesNothing(t *testing.T) {
	c := &capture{Backend: leased(t, false, leasePrefix(t), time.Hour, nil)}
	l, err := ratelimit.New(ratelimit.Name("x"), ratelimit.Permits(10000), ratelimit.Period(time.Second), ratelimit.WithBackend(c))
	require.NoError(t, err)
	require.NotNil(t, c.st)
	forceLease(t, c.st, backend.Request{Permits: 10000, Period: time.Second}, 10000)
	require.True(t, l.TryAcquire())
	allocs := testing.AllocsPerRun(1000, func() { _ = l.TryAcquire() })
	assert.Zero(t, allocs)
	assert.Equal(t, int64(1002), c.st.lz.cur.Load().usedNow(), "every call was leased")
}

// SPEC LS-1: a negative life fails New with R4C-ATR-004; 0, the default, is no lease; a
// limiter whose clock is not the system clock (a manual clock) gets no lease either.
func TestLS1_LeasesOption(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: redistest.ClosedAddr(t)})
	t.Cleanup(func() { _ = c.Close() })
	_, err := New(c, Leases(-time.Second))
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(err), "%v", err)
	b, err := New(c, Leases(0))
	require.NoError(t, err)
	assert.Nil(t, bindStore(t, b, "x").lz)
	b, err = New(c, Leases(time.Second))
	require.NoError(t, err)
	assert.NotNil(t, bindStore(t, b, "x").lz)
	st, err := b.Bind(backend.Binding{ID: "m", Clock: clock.NewManual()})
	require.NoError(t, err)
	assert.Nil(t, st.(*store).lz, "a manual clock: per call")
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close twice")
}

// SPEC LS-5: a call at another rate (the limiter was reconfigured) gives the lease back
// and goes to Redis.
func TestLS5_AnotherRateGivesTheLeaseBack(t *testing.T) {
	b := leased(t, false, leasePrefix(t), time.Hour, nil)
	st := bindStore(t, b, "x")
	forceLease(t, st, backend.Request{Permits: 20, Period: 2 * time.Second}, 10)
	g, err := st.Reserve(context.Background(), backend.Request{N: 1, Permits: 10, Period: time.Second})
	require.NoError(t, err)
	assert.Equal(t, backend.Admitted, g.Verdict)
	assert.Nil(t, st.lz.cur.Load())
	require.Eventually(t, func() bool { return b.Leases().Returned >= 8 }, 5*time.Second, 10*time.Millisecond,
		"the slots not started go back")
}

// SPEC LS-6: a leased permit whose permit time has passed was used: its cancel gives
// nothing back, to the lease or to Redis.
func TestLS6_CancelAfterThePermitTimeGivesNothing(t *testing.T) {
	ctx := context.Background()
	b := leased(t, false, leasePrefix(t), time.Hour, nil)
	st := bindStore(t, b, "x")
	req := backend.Request{N: 1, Permits: 20, Period: 2 * time.Second}
	l := forceLease(t, st, req, 10)
	g, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g.Verdict)
	require.Zero(t, g.Wait)
	c := l.cursor.Load()
	st.Cancel(ctx, g)
	assert.Equal(t, c, l.cursor.Load(), "the slot stays taken")
}
