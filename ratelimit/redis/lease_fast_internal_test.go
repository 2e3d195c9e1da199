package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// SPEC LS-9, LS-2: a call that never waits is refused from the lease in-process (through
// the store's TryTake) when its next slot is not due: with the wait until its permit time
// as the retry-after, taking nothing and allocating nothing. A call at another rate is
// not the lease's: TryTake leaves it to Reserve.
func TestLS9_LeasedRefusalIsLocal(t *testing.T) {
	prefix := leasePrefix(t)
	ctx := context.Background()
	plain, err := New(leaseClient(t, false), Prefix(prefix))
	require.NoError(t, err)
	// The whole burst is taken: the lease's slots start 2s ahead, each free 100ms after
	// the one before.
	g, _ := bindStore(t, plain, "x").Reserve(ctx, backend.Request{N: 20, Permits: 20, Period: 2 * time.Second})
	require.Equal(t, backend.Admitted, g.Verdict)
	c := &capture{Backend: leased(t, false, prefix, time.Hour, nil)}
	l, err := ratelimit.New(ratelimit.Name("x"), ratelimit.Permits(20), ratelimit.Period(2*time.Second), ratelimit.WithBackend(c))
	require.NoError(t, err)
	st := c.st
	ls := forceLease(t, st, backend.Request{Permits: 20, Period: 2 * time.Second}, 10)
	due := ls.l0 // slot 0's permit time, mapped late, on the process's clock

	v, wait := st.TryTake(int64(clock.System().Now()), 1, 20, 2*time.Second, nil)
	require.Equal(t, backend.Refused, v)
	assert.Positive(t, wait)
	assert.LessOrEqual(t, wait, int64(100*time.Millisecond)+leaseMargin)

	err = l.TryAcquireN(1)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	var ee *ratelimit.ExceededError
	require.True(t, errors.As(err, &ee))
	in, ok := ee.RetryIn()
	require.True(t, ok)
	assert.Positive(t, in)
	assert.LessOrEqual(t, in, time.Duration(due-int64(clock.System().Now()))+time.Millisecond)
	allocs := testing.AllocsPerRun(100, func() { _ = l.TryAcquire() })
	assert.Zero(t, allocs, "a leased refusal allocates nothing")
	assert.Equal(t, int64(0), ls.cursor.Load(), "nothing taken")
	assert.Same(t, ls, st.lz.cur.Load())

	v, _ = st.TryTake(int64(clock.System().Now()), 1, 10, 2*time.Second, nil)
	assert.Zero(t, v, "another rate: not the lease's")
}
