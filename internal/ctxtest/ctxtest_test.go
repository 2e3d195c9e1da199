package ctxtest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// OwnDone ends only at Cancel, and a registration on it costs a goroutine until then:
// what the tests that use it count.
func TestOwnDone(t *testing.T) {
	ctx := NewOwnDone()
	assert.NoError(t, ctx.Err())
	before := runtime.NumGoroutine()
	stop := context.AfterFunc(ctx, func() {})
	assert.Greater(t, runtime.NumGoroutine(), before, "one goroutine watches the registration")
	stop()
	assert.LessOrEqual(t, SettleGoroutines(before), before)
	ctx.Cancel()
	ctx.Cancel()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	<-ctx.Done()
}

// EagerClock's timers have fired when AfterFunc returns.
func TestEagerClock(t *testing.T) {
	fired := false
	timer := EagerClock{Manual: clock.NewManual()}.AfterFunc(time.Hour, func() { fired = true })
	assert.True(t, fired)
	assert.False(t, timer.Stop())
}

// OverContexts gives a canceled context, one past its deadline and a nil one, in that
// order, each with the error decorate.ContextErr returns for it.
func TestOverContexts(t *testing.T) {
	var names []string
	var wants []error
	for _, o := range OverContexts() {
		names = append(names, o.Name)
		wants = append(wants, o.Want)
		assert.Equal(t, o.Want, decorate.ContextErr(o.Ctx), o.Name)
	}
	assert.Equal(t, []string{"canceled", "deadline passed", "nil"}, names)
	assert.Equal(t, []error{context.Canceled, context.DeadlineExceeded, policy.ErrNilContext}, wants)
	assert.Nil(t, Nil().Ctx)
	_, ok := Expired().Ctx.Deadline()
	assert.True(t, ok, "a deadline, passed")
}
