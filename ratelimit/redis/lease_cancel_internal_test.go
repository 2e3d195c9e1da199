package redis

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// SPEC LS-6, LS-5: a leased reservation canceled after its lease went back to Redis (its
// life ended, its rate changed) goes back to Redis, and LeaseStats counts it returned,
// not used.
func TestLS6_CancelAfterTheLeaseWentBackCountsItReturned(t *testing.T) {
	prefix := leasePrefix(t)
	ctx := context.Background()
	plain, err := New(leaseClient(t, false), Prefix(prefix))
	require.NoError(t, err)
	other := bindStore(t, plain, "x")
	// The whole burst is taken: the lease's slots are all ahead.
	g, _ := other.Reserve(ctx, backend.Request{N: 20, Permits: 20, Period: 2 * time.Second})
	require.Equal(t, backend.Admitted, g.Verdict)
	b := leased(t, false, prefix, time.Hour, nil)
	st := bindStore(t, b, "x")
	req := backend.Request{N: 1, Permits: 20, Period: 2 * time.Second, MaxWait: time.Second}
	l := forceLease(t, st, req, 10)
	g1, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g1.Verdict)
	require.Positive(t, g1.Wait)
	st.drop(l) // its life ended
	st.Cancel(ctx, g1)
	assert.Equal(t, LeaseStats{Leased: 10, Returned: 10}, b.Leases(), "the canceled permit went back")
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
	require.Positive(t, st.lz.hold.Load())
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
	prefix := leasePrefix(t)
	ctx := context.Background()
	plain, err := New(leaseClient(t, false), Prefix(prefix))
	require.NoError(t, err)
	other := bindStore(t, plain, "x")
	g, _ := other.Reserve(ctx, backend.Request{N: 20, Permits: 20, Period: 2 * time.Second})
	require.Equal(t, backend.Admitted, g.Verdict)
	b := leased(t, false, prefix, time.Hour, nil)
	st := bindStore(t, b, "x")
	req := backend.Request{N: 1, Permits: 20, Period: 2 * time.Second, MaxWait: time.Second}
	l := forceLease(t, st, req, 10)
	g1, _ := st.Reserve(ctx, req)
	require.Equal(t, backend.Admitted, g1.Verdict)
	st.drop(l)
	before := b.Leases()
	require.Equal(t, LeaseStats{Leased: 10, Used: 1, Returned: 9}, before)
	g2, _ := st.Reserve(ctx, req) // per call now: the slot after g1's, given back
	require.Equal(t, backend.Admitted, g2.Verdict)
	require.Equal(t, g1.Next, g2.Prev)
	st.Cancel(ctx, g2)
	assert.Equal(t, before, b.Leases(), "g2 was not the lease's")
	g3, _ := other.Reserve(ctx, req)
	assert.Equal(t, g2.Prev, g3.Prev, "Redis has g2's slot back")
}
