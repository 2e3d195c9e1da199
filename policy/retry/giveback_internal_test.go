package retry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// countingGate allows every attempt, at clock time 1s, and counts those it holds.
type countingGate struct{ held int }

func (g *countingGate) TryAttempt(context.Context, policy.Layer, string, int) (time.Duration, bool) {
	g.held++
	return time.Second, true
}

func (g *countingGate) ReturnAttempt(time.Duration) { g.held-- }

// SPEC RB-6: the wait of an asynchronous call may end with a Cancel whose Stop runs just
// as the wait's timer starts the next attempt (the delay's Start is then called after
// Stop). The attempt whose grant Stop gave back is not made: nothing reaches next, so the
// gate's count matches the attempts made.
func TestRB6_AsyncAttemptWhoseGrantWasGivenBackIsNotMade(t *testing.T) {
	r, err := New(WithClock(clock.NewManual()))
	require.NoError(t, err)
	g := &countingGate{}
	r = r.limitedBy(g)
	made := 0
	ru := &run[struct{}, int]{r: r, c: r.cfg.Load(), ctx: context.Background(),
		next: func(context.Context, struct{}) *async.Future[int] { made++; return async.Completed(1) }}
	ru.n.Store(1)
	at, ok := r.admit(ru.ctx, 0, 2) // as Observe does after attempt 1 failed
	require.True(t, ok)
	ru.grant = at
	ru.granted.Store(true)

	_, err = ru.Stop(async.ErrCanceled) // Cancel, during the wait
	require.ErrorIs(t, err, async.ErrCanceled)
	f := ru.Start() // the timer's start, racing it
	assert.Zero(t, made, "an attempt given back is not made")
	assert.Zero(t, g.held, "the gate holds no attempt")
	_, _, err = f.Result()
	assert.ErrorIs(t, err, async.ErrCanceled)
}
