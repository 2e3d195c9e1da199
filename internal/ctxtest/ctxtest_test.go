package ctxtest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
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
