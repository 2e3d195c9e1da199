package retry

import (
	"context"
	"errors"
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

// SPEC RB-6: the result of an asynchronous call's attempt may be observed just as a
// Cancel ends the call (the Delayed's check that the call goes on passed; its Stop ran
// before Observe asked the gate). The attempt the gate then grants is never made, since
// the call has ended: it is given back.
func TestRB6_AsyncGrantAfterARacingCancelIsGivenBack(t *testing.T) {
	clk := clock.NewManual()
	r, err := New(WithClock(clk), Delay(time.Second))
	require.NoError(t, err)
	g := &countingGate{}
	r = r.limitedBy(g)
	made := 0
	ru := &run[struct{}, int]{r: r, c: r.cfg.Load(), ctx: context.Background(),
		next: func(context.Context, struct{}) *async.Future[int] { made++; return async.Completed(1) }}
	ru.n.Store(1)
	out := ru.d.Init(clk, ru.ctx, ru, ru)
	first, _ := async.NewPromise[int]()
	ru.d.Started(first) // attempt 1, in flight

	out.Cancel()                      // the call ends: Stop runs, with no grant held yet
	ru.Observe(0, errors.New("boom")) // attempt 1's failure, observed as Cancel ran
	clk.Advance(time.Hour)            // no wait is running: nothing starts
	assert.Zero(t, made, "no attempt after the call ended")
	assert.Zero(t, g.held, "the grant of an attempt never made is given back")
}
