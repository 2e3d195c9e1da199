package hedge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// newManual builds a hedge on a manual clock, with id "Svc.Call" and a recorder.
func newManual(t testing.TB, opts ...hedge.Option) (*hedge.Hedge, *clock.Manual, *contracttest.Recorder) {
	t.Helper()
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	opts = append([]hedge.Option{hedge.WithClock(clk), hedge.OnEvent(rec.Listen),
		hedge.Name("Svc.Call")}, opts...)
	h, err := hedge.New(opts...)
	require.NoError(t, err)
	return h, clk, rec
}

// withBudget is s with the budget's default settings (10% of the calls, at least 1 hedge
// per second, over 10s), which the hedges of these tests keep unless they say otherwise.
func withBudget(s hedge.Snapshot) hedge.Snapshot {
	s.BudgetPercent, s.BudgetWindow, s.BudgetMinPerSecond = 10, 10*time.Second, 1
	return s
}

// A step is how the dependency answers one attempt.
type step struct {
	after time.Duration // when it answers, after the attempt starts, on the clock
	v     string
	err   error
	never bool // it never answers (but it observes its context and Cancel)
	now   bool // it answers before it returns its future
}

func ok(after time.Duration, v string) step     { return step{after: after, v: v} }
func fails(after time.Duration, err error) step { return step{after: after, err: err} }
func failsNow(err error) step                   { return step{now: true, err: err} }
func never() step                               { return step{never: true} }

// dep is a dependency whose attempts answer as its steps say (the last step repeats),
// with clock timers; it observes its context: an attempt whose context ends fails with
// the context's error, and Cancel on its future stops its timer. It is safe for
// concurrent use.
type dep struct {
	clk   *clock.Manual
	steps []step

	mu   sync.Mutex
	ctxs []context.Context
	at   []time.Duration // when each attempt started
	futs []*async.Future[string]
}

func newDep(clk *clock.Manual, steps ...step) *dep { return &dep{clk: clk, steps: steps} }

func (d *dep) call(ctx context.Context, _ string) *async.Future[string] {
	d.mu.Lock()
	s := d.steps[min(len(d.ctxs), len(d.steps)-1)]
	d.ctxs = append(d.ctxs, ctx)
	d.at = append(d.at, d.clk.Now())
	d.mu.Unlock()
	var f *async.Future[string]
	switch {
	case s.now && s.err != nil:
		f = async.Failed[string](s.err)
	case s.now:
		f = async.Completed(s.v)
	default:
		dc := &depCall{}
		var complete func(string, error)
		f, complete = async.NewCancelablePromise[string](func() bool { dc.stop(); return false })
		dc.complete = complete
		dc.mu.Lock()
		if !s.never {
			dc.timer = d.clk.AfterFunc(s.after, func() { dc.end(s.v, s.err) })
		}
		dc.stopCtx = context.AfterFunc(ctx, func() { dc.end("", ctx.Err()) })
		dc.mu.Unlock()
	}
	d.mu.Lock()
	d.futs = append(d.futs, f)
	d.mu.Unlock()
	return f
}

// attempts returns how many attempts started.
func (d *dep) attempts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.ctxs)
}

// ctx returns attempt i's context (from 1).
func (d *dep) ctx(i int) context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ctxs[i-1]
}

// fut returns attempt i's future (from 1), as the dependency returned it.
func (d *dep) fut(i int) *async.Future[string] {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.futs[i-1]
}

// startTimes returns when each attempt started.
func (d *dep) startTimes() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.at...)
}

// depCall is one attempt of dep: its answer's timer and its hook on the context.
type depCall struct {
	mu       sync.Mutex
	timer    clock.Timer
	stopCtx  func() bool
	complete func(string, error)
}

func (c *depCall) stop() {
	c.mu.Lock()
	t, s := c.timer, c.stopCtx
	c.timer, c.stopCtx = nil, nil
	c.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	if s != nil {
		s()
	}
}

func (c *depCall) end(v string, err error) {
	c.stop()
	c.complete(v, err)
}

func pending[T any](f *async.Future[T]) bool {
	_, done, _ := f.Result()
	return !done
}

func result[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	v, done, err := f.Result()
	require.True(t, done, "the future is still pending")
	return v, err
}

// completedAt returns a function that reports the clock time at which f completed, or
// -1 while it is pending.
func completedAt[T any](clk clock.Clock, f *async.Future[T]) func() time.Duration {
	var mu sync.Mutex
	at := time.Duration(-1)
	f.OnComplete(func(T, error) {
		mu.Lock()
		at = clk.Now()
		mu.Unlock()
	})
	return func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return at
	}
}
