package ratelimit_test

// Second review of the local share (RL-19) and the rebase of a backed limiter's local
// schedule: scratch tests that try to break them.

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// zzFlapping answers Local or Reserved (a permit free now), switching at will.
type zzFlapping struct {
	local atomic.Bool
	share int
}

func (f *zzFlapping) LocalShare() int                                 { return f.share }
func (f *zzFlapping) Bind(ratelimit.Binding) (ratelimit.Store, error) { return f, nil }
func (f *zzFlapping) Reserve(context.Context, ratelimit.Request) (ratelimit.Grant, error) {
	if f.local.Load() {
		return ratelimit.Grant{Outcome: ratelimit.Local}, nil
	}
	return ratelimit.Grant{Outcome: ratelimit.Reserved}, nil
}
func (f *zzFlapping) Cancel(context.Context, ratelimit.Token) {}
func (f *zzFlapping) Available(_ context.Context, c ratelimit.Config) (int, bool) {
	if f.local.Load() {
		return 0, false
	}
	return c.Permits, true
}

// RC-4 on the local share, as a property: after any change of Permits and Period, the
// local schedule frees at once no more permits than it had free, and at most the new local
// burst. Random configurations, shares and spent permits.
func TestBreak2_LocalShareRebaseProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		share := 1 + rng.IntN(5)
		p1, p2 := 1+rng.IntN(40), 1+rng.IntN(40)
		d1 := time.Duration(1+rng.IntN(5000)) * time.Millisecond
		d2 := time.Duration(1+rng.IntN(5000)) * time.Millisecond
		clk := clock.NewManual()
		b := &zzFlapping{share: share}
		b.local.Store(true)
		l, err := ratelimit.New(ratelimit.Name("prop"), ratelimit.Permits(p1), ratelimit.Period(d1),
			ratelimit.WithClock(clk), ratelimit.WithBackend(b))
		require.NoError(t, err)
		spend := rng.IntN(p1 + 1)
		for range spend {
			l.TryAcquire()
		}
		clk.Advance(time.Duration(rng.IntN(int(d1))))
		before := l.AvailablePermits()
		require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: p2, Period: d2}))
		after := l.AvailablePermits()
		burst2 := max(p2/share, 1)
		if !assert.LessOrEqual(t, after, min(before, burst2),
			"case %d: share %d, %d/%v -> %d/%v, spent %d", i, share, p1, d1, p2, d2, spend) {
			return
		}
		got := 0
		for got <= burst2 && l.TryAcquire() {
			got++
		}
		if !assert.Equal(t, after, got, "case %d: AvailablePermits vs calls", i) {
			return
		}
	}
}

// Concurrent Reconfigure, calls, reservations and cancels while the store flaps between
// Redis and Local: no race, no panic, no admission beyond the local bound on a frozen
// clock (every call on Local after the first switch is decided by the local schedule,
// whose burst is at most the largest local burst configured, plus what cancels gave back).
func TestBreak2_ConcurrentReconfigureOnTheLocalShare(t *testing.T) {
	clk := clock.NewManual()
	b := &zzFlapping{share: 3}
	l, err := ratelimit.New(ratelimit.Name("conc"), ratelimit.Permits(30), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Second), ratelimit.WithClock(clk), ratelimit.WithBackend(b))
	require.NoError(t, err)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				switch (i + g) % 4 {
				case 0:
					l.TryAcquire()
				case 1:
					_ = l.TryAcquireN(1 + i%30)
				case 2:
					if r, err := l.ReserveN(1 + i%10); err == nil {
						r.Cancel()
					}
				case 3:
					l.AvailablePermits()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 2000 {
			b.local.Store(i%3 != 0)
			_ = l.Reconfigure(ratelimit.Config{Permits: 10 + i%25, Period: time.Duration(1+i%7) * 100 * time.Millisecond,
				MaxWait: time.Second, Disabled: i%11 == 0})
			if i%50 == 0 {
				clk.Advance(time.Millisecond)
			}
		}
		close(stop)
	}()
	wg.Wait()
	b.local.Store(true)
	require.NoError(t, l.Reconfigure(ratelimit.Config{Permits: 30, Period: time.Second}))
	assert.LessOrEqual(t, l.AvailablePermits(), 10)
}
