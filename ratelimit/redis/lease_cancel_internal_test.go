package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// SPEC LS-6, LS-5: a leased reservation canceled after its lease went back to Redis (its
// life ended, its rate changed) goes back to Redis, and LeaseStats counts it returned,
// not used.
func TestLS6_CancelAfterTheLeaseWentBackCountsItReturned(t *testing.T) {
	ctx := context.Background()
	other, b, st, req, l := leaseBehindABurst(t)
	g1, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g1.Verdict)
	require.Positive(t, g1.Wait)
	st.drop(l) // its life ended
	st.Cancel(ctx, g1)
	assert.Equal(t, LeaseStats{Leases: 1, Leased: 10, Returned: 10}, b.Leases(), "the canceled permit went back")
	g2, _ := other.Reserve(ctx, backend.Request{N: 1, Permits: 20, Period: 2 * time.Second, MaxWait: 3 * time.Second})
	require.Equal(t, backend.Admitted, g2.Verdict)
	assert.Equal(t, g1.Prev, g2.Prev, "Redis has the canceled slot back")
}

// SPEC LS-3, RL-6: once Redis refused a lease, a call refused locally is told the time
// until a permit is free on Redis, as Redis would tell it: a call made then is not
// refused for the same booking.
func TestLS3_RefusalAfterARefusedLeaseTellsTheTrueWait(t *testing.T) {
	prefix := leasePrefix(t)
	ctx := context.Background()
	plain, err := New(leaseClient(t, false), Prefix(prefix), Timeout(2*time.Second))
	require.NoError(t, err)
	other := bindStore(t, plain, "x")
	rate := backend.Request{Permits: 20, Period: 2 * time.Second}
	// Two bursts: the schedule is booked 4s ahead, a single permit is free in about 2.1s.
	for range 2 {
		g, _ := other.Reserve(ctx, backend.Request{N: 20, Permits: 20, Period: 2 * time.Second, MaxWait: 3 * time.Second})
		require.Equal(t, backend.Admitted, g.Verdict)
	}
	b := leased(t, false, prefix, 500*time.Millisecond, nil)
	st := bindStore(t, b, "x")
	require.True(t, st.lz.busy.CompareAndSwap(false, true))
	r := rate
	r.N, r.MaxWait = 10, b.cfg.Lease
	st.reserveLease(r)
	require.Nil(t, st.lz.cur.Load(), "Redis refused the lease")
	require.NotNil(t, st.lz.hold.Load())
	for _, n := range []int{1, 3} {
		g, err := st.Reserve(ctx, backend.Request{N: n, Permits: 20, Period: 2 * time.Second})
		require.NoError(t, err)
		require.Equal(t, backend.Refused, g.Verdict)
		want, _ := other.Reserve(ctx, backend.Request{N: n, Permits: 20, Period: 2 * time.Second})
		require.Equal(t, backend.Refused, want.Verdict)
		assert.InDelta(t, want.Wait.Seconds(), g.Wait.Seconds(), 0.1, "weight %d: the retry-after is Redis's", n)
		assert.LessOrEqual(t, g.Wait, want.Wait+10*time.Millisecond, "weight %d: never later than Redis's", n)
	}
}

// SPEC LS-6: once a lease went back, a reservation Redis made in its former slots (the
// TAT moved back over them) is not the lease's: its cancel goes to Redis and LeaseStats
// stays as it was.
func TestLS6_CancelOfASlotRedisMadeAfterTheLeaseWentBack(t *testing.T) {
	ctx := context.Background()
	other, b, st, req, l := leaseBehindABurst(t)
	g1, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g1.Verdict)
	st.drop(l)
	before := b.Leases()
	require.Equal(t, LeaseStats{Leases: 1, Leased: 10, Used: 1, Returned: 9}, before)
	g2, _ := st.Reserve(ctx, req) // per call now: the slot after g1's, given back
	require.Equal(t, backend.Admitted, g2.Verdict)
	require.Equal(t, g1.Next, g2.Prev)
	st.Cancel(ctx, g2)
	assert.Equal(t, before, b.Leases(), "g2 was not the lease's")
	g3, _ := other.Reserve(ctx, req)
	assert.Equal(t, g2.Prev, g3.Prev, "Redis has g2's slot back")
}

// forget takes out of r the admission of n permits at at (on r's clock for a leased one,
// the server's otherwise), if it has one.
func (r *recorder) forget(at int64, leased bool, n int) bool {
	if leased {
		at += r.off
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, a := range r.list {
		if a.at == at && a.leased == leased && a.n == n {
			r.list = append(r.list[:i], r.list[i+1:]...)
			return true
		}
	}
	return false
}

// SPEC LS-2, LS-6, RL-5: three instances reserve 1 or 2 permits with waits, and cancel
// half of those still well ahead of their permit time (to their lease or to Redis): the
// admissions that stand never exceed the bound, with further windows too, and the counts
// of the leases add up.
func TestLS6_CancelsUnderLoadKeepTheBound(t *testing.T) {
	onBoth(t, func(t *testing.T, cluster bool) {
		for _, wins := range [][]backend.Window{nil, {{Permits: 30, Period: 6 * time.Second}}} {
			t.Run(fmt.Sprintf("windows=%d", len(wins)), func(t *testing.T) {
				prefix, rec := leasePrefix(t), newRecorder()
				const permits, period = 20, 2 * time.Second
				var wg sync.WaitGroup
				var canceled atomic.Int64
				stop := make(chan struct{})
				var bs []*Backend
				for range 3 {
					b := leased(t, cluster, prefix, time.Second, rec)
					bs = append(bs, b)
					st := bindStore(t, b, "shared")
					for g := range 3 {
						wg.Go(func() {
							rnd := rand.New(rand.NewPCG(uint64(g), 7))
							for {
								select {
								case <-stop:
									return
								default:
								}
								n := 1 + rnd.IntN(2)
								now := clock.System().Now()
								req := backend.Request{N: n, MaxWait: 300 * time.Millisecond, Permits: permits, Period: period,
									Windows: wins, Now: now}
								gr, err := st.Reserve(context.Background(), req)
								if err != nil || gr.Verdict != backend.Admitted || gr.Wait < 50*time.Millisecond || rnd.IntN(2) == 0 {
									continue
								}
								st.Cancel(context.Background(), gr)
								if rec.forget(int64(now+gr.Wait), true, n) || rec.forget(gr.At, false, n) {
									canceled.Add(int64(n))
								}
							}
						})
					}
				}
				// The load runs 3s, and on until a cancel was made (at most 10s): a machine
				// loaded enough to slow every call may need longer to make one.
				for start := time.Now(); time.Since(start) < 3*time.Second ||
					(canceled.Load() == 0 && time.Since(start) < 10*time.Second); {
					time.Sleep(50 * time.Millisecond)
				}
				close(stop)
				wg.Wait()
				list := rec.all()
				var total, nl int
				for _, a := range list {
					total += a.n
					if a.leased {
						nl += a.n
					}
				}
				t.Logf("%d permits stand, %d leased, %d canceled", total, nl, canceled.Load())
				assert.Zero(t, over(list, permits, int64(period/permits)), "Permits + floor(d/T)")
				if len(wins) > 0 {
					assert.Zero(t, over(list, 30, int64(200*time.Millisecond)), "the window's bound")
				}
				assert.Positive(t, canceled.Load())
				for _, b := range bs {
					require.NoError(t, b.Close())
					s := b.Leases()
					assert.Equal(t, s.Leased, s.Used+s.Returned+s.Wasted, "%+v", s)
					assert.GreaterOrEqual(t, s.Used, int64(0))
				}
			})
		}
	})
}

// SPEC LS-5, LS-2: Close while the limiter's calls go on: the calls after it decide on
// Redis, the bound holds across it, nothing stays leased, and the counts add up.
func TestLS5_CloseDuringCalls(t *testing.T) {
	prefix, rec := leasePrefix(t), newRecorder()
	const permits, period = 50, time.Second
	var bs []*Backend
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		b := leased(t, false, prefix, 500*time.Millisecond, rec)
		bs = append(bs, b)
		l, err := ratelimit.New(ratelimit.Name("shared"), ratelimit.Permits(permits), ratelimit.Period(period),
			ratelimit.MaxWait(100*time.Millisecond), ratelimit.WithBackend(b))
		require.NoError(t, err)
		for g := range 3 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if g == 0 {
						// Longer than MaxWait: no Acquire gives its permit back (the recorder
						// would still count it).
						ctx, cancel := context.WithTimeout(context.Background(), time.Second)
						_ = l.Acquire(ctx)
						cancel()
					} else {
						_ = l.TryAcquire()
					}
				}
			})
		}
	}
	time.Sleep(1500 * time.Millisecond) // the load's duration before Close
	var cw sync.WaitGroup
	for range 2 {
		cw.Go(func() { _ = bs[0].Close() })
	}
	cw.Wait()
	closed := bs[0].Leases()
	time.Sleep(time.Second) // and after
	close(stop)
	wg.Wait()
	assert.Zero(t, over(rec.all(), permits, int64(period/permits)), "Permits + floor(d/T)")
	assert.Equal(t, closed, bs[0].Leases(), "no lease after Close")
	bs[0].ls.mu.Lock()
	assert.Empty(t, bs[0].ls.live)
	bs[0].ls.mu.Unlock()
	for _, b := range bs {
		require.NoError(t, b.Close())
		s := b.Leases()
		t.Logf("%+v", s)
		assert.Equal(t, s.Leased, s.Used+s.Returned+s.Wasted, "%+v", s)
	}
}

// SPEC LS-5: a lease whose reservation was in flight when Close came is given back at
// once, and counted leased as well as returned: Leased = Used + Returned + Wasted.
func TestLS5_LeaseReservedDuringCloseIsCounted(t *testing.T) {
	b := leased(t, false, leasePrefix(t), time.Hour, nil)
	st := bindStore(t, b, "x")
	require.NoError(t, b.Close())
	// The background run that was on its way when Close stopped the others.
	st.lz.busy.Store(true)
	st.reserveLease(backend.Request{N: 10, MaxWait: time.Hour, Permits: 20, Period: 2 * time.Second})
	s := b.Leases()
	assert.Equal(t, int64(10), s.Leased, "%+v", s)
	assert.Equal(t, s.Leased, s.Used+s.Returned+s.Wasted, "%+v", s)
}

// SPEC RL-11, LS-1: the available permits of a store with a lease count the lease's slots
// a call could take now, as well as Redis's: as many as the calls that then pass at once.
func TestLS1_AvailableCountsTheLease(t *testing.T) {
	onBoth(t, func(t *testing.T, cluster bool) {
		for _, wins := range [][]backend.Window{nil, {{Permits: 30, Period: 6 * time.Second}}} {
			ctx := context.Background()
			b := leased(t, cluster, leasePrefix(t), time.Hour, nil)
			st := bindStore(t, b, "x")
			req := backend.Request{Permits: 20, Period: 2 * time.Second, Windows: wins}
			forceLease(t, st, req, 10)
			n, ok := st.Available(ctx, req)
			require.True(t, ok)
			passed := 0
			for range 40 {
				req.N = 1
				g, err := st.Reserve(ctx, req)
				require.NoError(t, err)
				if g.Verdict != backend.Admitted {
					break
				}
				passed++
			}
			// A slot of the lease (one every 100ms) may pass between the two.
			assert.InDelta(t, passed, n, 1, "windows %v: available %d, passed at once %d", wins, n, passed)
		}
	})
}

// SPEC LS-3, LS-4: a call for more permits than the store's lease holds, which no lease
// of that size serves, goes to Redis as without leases, also while the next lease is on
// its way: it is not refused locally while Redis has its permits free.
func TestLS3_CallLargerThanTheLeaseGoesToRedis(t *testing.T) {
	ctx := context.Background()
	b := leased(t, false, leasePrefix(t), time.Hour, nil)
	st := bindStore(t, b, "x")
	req := backend.Request{Permits: 100, Period: time.Second}
	forceLease(t, st, req, 4)
	st.lz.busy.Store(true) // the next lease is on its way
	defer st.lz.busy.Store(false)
	req.N = 10
	g, err := st.Reserve(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, backend.Admitted, g.Verdict, "Redis has 96 permits free")
}

// SPEC LS-3, LS-5: Redis's refusal of a lease at one rate holds only calls at that rate:
// after a change of rate, a call goes to Redis as without leases, and is decided as a
// store without leases decides it.
func TestLS5_ARefusedLeaseHoldsOnlyItsRate(t *testing.T) {
	prefix := leasePrefix(t)
	ctx := context.Background()
	plain, err := New(leaseClient(t, false), Prefix(prefix), Timeout(2*time.Second))
	require.NoError(t, err)
	b := leased(t, false, prefix, 500*time.Millisecond, nil)
	st, ref := bindStore(t, b, "x"), bindStore(t, plain, "y")
	old := backend.Request{Permits: 20, Period: 2 * time.Second, MaxWait: 3 * time.Second}
	for _, s := range []*store{bindStore(t, plain, "x"), ref} {
		for range 2 { // booked 4s ahead
			old.N = 20
			g, _ := s.Reserve(ctx, old)
			require.Equal(t, backend.Admitted, g.Verdict)
		}
	}
	require.True(t, st.lz.busy.CompareAndSwap(false, true))
	r := old
	r.N, r.MaxWait = 10, b.cfg.Lease
	st.reserveLease(r)
	require.NotNil(t, st.lz.hold.Load(), "Redis refused the lease")
	// The limiter's rate is now 100 times higher.
	next := backend.Request{N: 1, Permits: 2000, Period: 2 * time.Second, MaxWait: 100 * time.Millisecond}
	want, err := ref.Reserve(ctx, next)
	require.NoError(t, err)
	g, err := st.Reserve(ctx, next)
	require.NoError(t, err)
	require.Equal(t, backend.Admitted, want.Verdict)
	assert.Equal(t, want.Verdict, g.Verdict, "as without leases (wait %v, Redis's %v)", g.Wait, want.Wait)
}

// SPEC LS-6: the end of an older lease's life, after a later lease went back, does not
// make the store forget the later one: a reservation of it canceled then still counts
// as returned.
func TestLS6_AnOlderLeaseEndingKeepsTheLatestKnown(t *testing.T) {
	prefix := leasePrefix(t)
	ctx := context.Background()
	plain, err := New(leaseClient(t, false), Prefix(prefix))
	require.NoError(t, err)
	g, _ := bindStore(t, plain, "x").Reserve(ctx, backend.Request{N: 20, Permits: 20, Period: 2 * time.Second})
	require.Equal(t, backend.Admitted, g.Verdict)
	b := leased(t, false, prefix, time.Hour, nil)
	st := bindStore(t, b, "x")
	req := backend.Request{N: 1, Permits: 20, Period: 2 * time.Second, MaxWait: 3 * time.Second}
	l1 := forceLease(t, st, req, 4)
	st.drop(l1)
	l2 := forceLease(t, st, req, 4)
	g2, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g2.Verdict)
	st.drop(l2)
	st.drop(l1) // its timer, late
	st.Cancel(ctx, g2)
	assert.Equal(t, LeaseStats{Leases: 2, Leased: 8, Returned: 8}, b.Leases())
}
