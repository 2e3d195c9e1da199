package adaptivelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// SPEC AL-4: a call whose context is nil or already done when it arrives is let in by
// nobody, never runs the function and publishes nothing, whether it would fit or not and
// whatever MaxWait is: it is rejected with the limiter's rejection wrapping the context's
// error (policy.ErrNilContext for a nil context).
func TestDoneContextOnArrivalSync(t *testing.T) {
	contracttest.ArrivalCases(t, func(t *testing.T, dc ctxtest.Over, maxWait time.Duration, full bool) {
		l, clk, rec := newManual(t, opts(fixed(2), []adaptivelimit.Option{adaptivelimit.MaxWait(maxWait)})...)
		if full {
			acquire(t, l)
			acquire(t, l)
		}
		inFlight := l.InFlight()
		call := adaptivelimit.DecorateFunc(l, func(context.Context, struct{}) (int, error) {
			t.Error("the function ran")
			return 1, nil
		})
		v, err := call(dc.Ctx, struct{}{})
		assert.Zero(t, v)
		requireExceeded(t, err)
		require.ErrorIs(t, err, dc.Want)

		p, err := l.Acquire(dc.Ctx)
		requireExceeded(t, err)
		require.ErrorIs(t, err, dc.Want)
		assert.Zero(t, p.InFlight())

		assert.Equal(t, inFlight, l.InFlight(), "nothing let in")
		assert.Zero(t, l.Queued())
		assert.Zero(t, clk.PendingTasks())
		assert.Empty(t, rec.Events(), "no event")
	})
}

// SPEC AL-4: the same for asynchronous calls: a future failed with that rejection, next
// never runs, nothing counted, no queue, no timer, no event.
func TestDoneContextOnArrivalAsync(t *testing.T) {
	contracttest.ArrivalCases(t, func(t *testing.T, dc ctxtest.Over, maxWait time.Duration, full bool) {
		l, clk, rec := newManual(t, opts(fixed(2), []adaptivelimit.Option{adaptivelimit.MaxWait(maxWait)})...)
		if full {
			acquire(t, l)
			acquire(t, l)
		}
		inFlight := l.InFlight()
		c := contracttest.NewCalls()
		fut := adaptivelimit.DecorateAsyncFunc(l, c.Next)(dc.Ctx, 1)
		_, err := result(t, fut)
		requireExceeded(t, err)
		require.ErrorIs(t, err, dc.Want)
		assert.Empty(t, c.Started(), "next never ran")
		assert.Equal(t, inFlight, l.InFlight(), "nothing let in")
		assert.Zero(t, l.Queued())
		assert.Zero(t, clk.PendingTasks())
		assert.Empty(t, rec.Events(), "no event")
	})
}
