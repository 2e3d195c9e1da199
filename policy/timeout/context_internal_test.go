package timeout

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SPEC AS-4: the context of a call timed by the policy's clock keeps the context
// package's promise while its deadline ends it on another goroutine: Err is nil while Done
// is open, and once Done is closed Err is context.DeadlineExceeded. Run with -race.
func TestClockCtx_AS4_ErrNeverBeforeDone(t *testing.T) {
	l := &limit{cfg: Config{Duration: time.Hour}, err: &Error{}}
	for range 300 {
		c := newClockCtx(context.Background(), l)
		early := ctxtest.ErrBeforeDone(c, c.expire)
		require.False(t, early, "Err() != nil while Done() was still open")
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	}
}
