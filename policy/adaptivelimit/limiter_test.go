package adaptivelimit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

func newManual(t *testing.T, opts ...adaptivelimit.Option) (*adaptivelimit.Limiter, *clock.Manual, *contracttest.Recorder) {
	t.Helper()
	clk := clock.NewManual()
	rec := &contracttest.Recorder{}
	opts = append([]adaptivelimit.Option{adaptivelimit.WithClock(clk), adaptivelimit.OnEvent(rec.Listen),
		adaptivelimit.Name("Svc.Call")}, opts...)
	l, err := adaptivelimit.New(opts...)
	require.NoError(t, err)
	return l, clk, rec
}

// fixed pins the limit at n: it can move neither up nor down.
func fixed(n int) []adaptivelimit.Option {
	return []adaptivelimit.Option{adaptivelimit.MinLimit(n), adaptivelimit.MaxLimit(n), adaptivelimit.InitialLimit(n)}
}

func opts(groups ...[]adaptivelimit.Option) []adaptivelimit.Option {
	var all []adaptivelimit.Option
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// aimd is AIMD with the limit starting at initial, within [1, 100], and halving on a drop.
func aimd(initial int) []adaptivelimit.Option {
	return []adaptivelimit.Option{adaptivelimit.UseAlgorithm(adaptivelimit.AIMD), adaptivelimit.InitialLimit(initial),
		adaptivelimit.MaxLimit(100), adaptivelimit.BackoffRatio(0.5), adaptivelimit.LatencyThreshold(time.Second)}
}

func requireExceeded(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	var ee *adaptivelimit.ExceededError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "Svc.Call", ee.InstanceID())
}

func acquire(t *testing.T, l *adaptivelimit.Limiter) adaptivelimit.Permit {
	t.Helper()
	p, err := l.Acquire(context.Background())
	require.NoError(t, err)
	return p
}

// SPEC AL-1: with MaxWait 0 a call that does not fit under the limit is rejected at once;
// the function is not called, and the room comes back when the admitted call returns.
func TestSyncRejectsAtOnce(t *testing.T) {
	l, clk, rec := newManual(t, fixed(1)...)
	var inner, outer decorate.Func[int, string]
	calls := 0
	outer = adaptivelimit.DecorateFunc(l, func(ctx context.Context, depth int) (string, error) {
		calls++
		assert.Equal(t, 1, l.InFlight())
		if depth == 0 {
			_, err := inner(ctx, 1) // the only room is ours
			requireExceeded(t, err)
			assert.Same(t, l.Rejection(), err)
		}
		return "ok", nil
	})
	inner = outer

	got, err := outer(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	assert.Equal(t, 1, calls, "the rejected call never ran")
	assert.Zero(t, l.InFlight())
	assert.Zero(t, clk.PendingTasks())

	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, adaptivelimit.EventRejected, events[0].Kind)
	assert.Equal(t, "Svc.Call", events[0].Instance)
	assert.Zero(t, events[0].Wait)
	assert.Same(t, l.Rejection(), events[0].Err)
}

// SPEC AL-10: a function that panics counts out without a sample: the panic goes on and
// the limit does not move, where a success would have raised it.
func TestSyncPanicLeavesNoSample(t *testing.T) {
	l, _, _ := newManual(t, aimd(1)...)
	call := adaptivelimit.DecorateFunc(l, func(_ context.Context, fail bool) (int, error) {
		if fail {
			panic("boom")
		}
		return 1, nil
	})
	assert.PanicsWithValue(t, "boom", func() { _, _ = call(context.Background(), true) })
	assert.Zero(t, l.InFlight())
	assert.Equal(t, 1, l.Limit(), "no sample")
	_, err := call(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, 2, l.Limit(), "a success is a sample: the round ends and AIMD adds 1")
}

// SPEC AL-5: waiters are let in in arrival order; each publishes how long it waited.
func TestSyncFIFO(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
	held := acquire(t, l)

	var mu sync.Mutex
	var order []int
	call := adaptivelimit.DecorateFunc(l, func(_ context.Context, i int) (int, error) {
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		return i, nil
	})
	const n = 6
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			_, err := call(context.Background(), i)
			assert.NoError(t, err)
		})
		contracttest.Eventually(t, func() bool { return l.Queued() == i }, "waiter queued")
	}
	assert.Equal(t, n, clk.PendingTasks(), "one MaxWait timer per waiter")
	clk.Advance(10 * time.Millisecond)
	held.Release()
	wg.Wait()

	assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, order)
	assert.Zero(t, clk.PendingTasks())
	assert.Zero(t, l.InFlight())
	assert.Zero(t, l.Queued())
	events := rec.Events()
	require.Len(t, events, n)
	for _, e := range events {
		assert.Equal(t, adaptivelimit.EventWaited, e.Kind)
		assert.Equal(t, 10*time.Millisecond, e.Wait)
	}
}

// SPEC AL-5: room given back is handed to the oldest waiter within Release itself: a
// newcomer finds none to barge in on, even before the waiter's goroutine has run.
func TestSyncHandOffNoBarging(t *testing.T) {
	l, _, _ := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
	held := acquire(t, l)
	proceed := make(chan struct{})
	var ran atomic.Bool
	call := adaptivelimit.DecorateFunc(l, func(context.Context, struct{}) (int, error) {
		ran.Store(true)
		<-proceed
		return 0, nil
	})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = call(context.Background(), struct{}{}) })
	contracttest.Eventually(t, func() bool { return l.Queued() == 1 }, "waiter queued")

	held.Release()
	// The room now belongs to the waiter, whether or not its goroutine has run yet.
	assert.Equal(t, 1, l.InFlight())
	assert.Zero(t, l.Queued())
	_, ok := l.TryAcquire()
	assert.False(t, ok)
	close(proceed)
	wg.Wait()
	assert.True(t, ran.Load())
	p, ok := l.TryAcquire()
	assert.True(t, ok)
	p.Release()
}

// SPEC AL-6: a waiter is rejected after MaxWait, driven by the manual clock.
func TestSyncMaxWait(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(100 * time.Millisecond)})...)
	held, ok := l.TryAcquire()
	require.True(t, ok)
	var ran atomic.Bool
	call := adaptivelimit.DecorateFunc(l, func(context.Context, struct{}) (int, error) { ran.Store(true); return 1, nil })
	result := make(chan error, 1)
	go func() {
		_, err := call(context.Background(), struct{}{})
		result <- err
	}()
	contracttest.Eventually(t, func() bool { return l.Queued() == 1 }, "waiter queued")
	assert.Equal(t, 1, clk.PendingTasks())

	clk.Advance(99 * time.Millisecond)
	assert.Equal(t, 1, l.Queued(), "still waiting before MaxWait")

	clk.Advance(time.Millisecond)
	err := <-result
	requireExceeded(t, err)
	assert.Same(t, l.Rejection(), err)
	assert.False(t, ran.Load())
	assert.Zero(t, l.Queued())
	assert.Equal(t, 1, l.InFlight())
	assert.Zero(t, clk.PendingTasks())

	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, adaptivelimit.EventRejected, events[0].Kind)
	assert.Equal(t, 100*time.Millisecond, events[0].Wait)
	assert.Equal(t, 100*time.Millisecond, events[0].At)
	held.Release()
	assert.Zero(t, l.InFlight())
}

// expiringCtx is a context whose "deadline" passes when the test cancels it.
type expiringCtx struct{ context.Context }

func (c expiringCtx) Err() error {
	if c.Context.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// SPEC AL-7: a context that ends during the wait rejects the call with an error matching
// ErrLimitExceeded and the context's error; the waiter leaves the queue at once.
func TestSyncContextEndsWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			return expiringCtx{ctx}, cancel
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
			held, ok := l.TryAcquire()
			require.True(t, ok)
			call := adaptivelimit.DecorateFunc(l, func(context.Context, struct{}) (int, error) {
				t.Error("the function ran")
				return 0, nil
			})
			ctx, cancel := tc.ctx()
			defer cancel()
			result := make(chan error, 1)
			go func() {
				_, err := call(ctx, struct{}{})
				result <- err
			}()
			contracttest.Eventually(t, func() bool { return l.Queued() == 1 }, "waiter queued")
			cancel()
			err := <-result
			requireExceeded(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.Zero(t, l.Queued(), "the waiter left the queue at once")
			assert.Zero(t, clk.PendingTasks(), "the MaxWait timer is stopped")
			events := rec.Events()
			require.Len(t, events, 1)
			assert.Equal(t, adaptivelimit.EventRejected, events[0].Kind)
			assert.Same(t, err, events[0].Err)
			held.Release()
			assert.Zero(t, l.InFlight())
		})
	}
}

// SPEC AL-20: the direct API. TryAcquire never waits; Acquire waits up to MaxWait; a
// permit given back twice, or the zero Permit, gives back nothing more.
func TestPermits(t *testing.T) {
	l, _, rec := newManual(t, fixed(2)...)
	p1 := acquire(t, l)
	p2, ok := l.TryAcquire()
	require.True(t, ok)
	assert.Equal(t, 1, p1.InFlight())
	assert.Equal(t, 2, p2.InFlight())
	_, ok = l.TryAcquire()
	assert.False(t, ok)
	_, err := l.Acquire(context.Background())
	requireExceeded(t, err)
	assert.Equal(t, 2, l.InFlight())
	p1.Record(nil)
	p2.Release()
	assert.Zero(t, l.InFlight())
	p2.Release() // given back twice: no call in flight to count out
	p2.Record(nil)
	assert.Zero(t, l.InFlight())
	var zero adaptivelimit.Permit
	zero.Release()
	zero.Record(errors.New("x"))
	assert.Zero(t, zero.InFlight())
	p3 := acquire(t, l)
	p4 := acquire(t, l)
	assert.Equal(t, 2, p4.InFlight(), "the counter is intact")
	_, ok = l.TryAcquire()
	assert.False(t, ok)
	p3.Release()
	p4.Release()
	assert.Len(t, rec.Of(adaptivelimit.EventRejected), 3)
}

// SPEC AL-20, AL-18: giving a permit back twice through the same variable gives back one
// room only: another call's room is not freed, and no more calls run than the limit.
func TestPermitGivenBackTwiceFreesNoOtherRoom(t *testing.T) {
	l, _, _ := newManual(t, fixed(2)...)
	p1 := acquire(t, l)
	p2 := acquire(t, l)
	p1.Release()
	p1.Release()
	p1.Record(nil)
	assert.Equal(t, 1, l.InFlight(), "p2 still holds its room")
	p3 := acquire(t, l)
	_, ok := l.TryAcquire()
	assert.False(t, ok, "two calls in flight under a limit of 2")
	p2.Record(nil)
	p2.Record(nil)
	assert.Equal(t, 1, l.InFlight())
	p3.Release()
	assert.Zero(t, l.InFlight())
}

// SPEC AL-9: when the limit falls below the calls in flight, nobody new is let in until
// the calls in flight are below it.
func TestLimitFallsBelowInFlight(t *testing.T) {
	l, _, rec := newManual(t, aimd(10)...)
	permits := make([]adaptivelimit.Permit, 10)
	for i := range permits {
		permits[i] = acquire(t, l)
	}
	// The first call's drop ends the first round (it was let in after the round began,
	// and 1 call was in flight with it): AIMD halves the limit.
	permits[0].Record(context.DeadlineExceeded)
	assert.Equal(t, 5, l.Limit())
	assert.Equal(t, 9, l.InFlight())
	changed := rec.Of(adaptivelimit.EventChanged)
	require.Len(t, changed, 1)
	assert.Equal(t, 5, int(changed[0].Attr("limit").Int64()))
	assert.Equal(t, 10, int(changed[0].Attr("previous_limit").Int64()))

	for i := 1; i <= 4; i++ {
		_, ok := l.TryAcquire()
		require.False(t, ok, "%d in flight, limit 5", l.InFlight())
		permits[i].Record(context.DeadlineExceeded) // let in before the change: ignored
	}
	assert.Equal(t, 5, l.InFlight())
	assert.Equal(t, 5, l.Limit(), "the drops of calls let in before the limit fell are not counted again")
	_, ok := l.TryAcquire()
	require.False(t, ok, "as many in flight as the limit")
	permits[5].Release()
	p, ok := l.TryAcquire()
	require.True(t, ok, "4 in flight, limit 5")
	assert.Equal(t, 5, p.InFlight())
	p.Release()
	for _, p := range permits[6:] {
		p.Release()
	}
	assert.Zero(t, l.InFlight())
}

// SPEC AL-8: when the limit rises, queued waiters are let in: more than the room the
// completing call gives back.
func TestLimitRiseLetsWaitersIn(t *testing.T) {
	l, _, rec := newManual(t, opts(aimd(2), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
	p1 := acquire(t, l)
	p2 := acquire(t, l)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	f3 := call(context.Background(), 3)
	f4 := call(context.Background(), 4)
	require.Equal(t, 2, l.Queued())

	// p2, let in with 2 in flight under a limit of 2, ends the first round: AIMD adds 1.
	p2.Record(nil)
	assert.Equal(t, 3, l.Limit())
	assert.Equal(t, []int{3, 4}, c.Started(), "one for the room given back, one for the higher limit")
	assert.Zero(t, l.Queued())
	assert.Equal(t, 3, l.InFlight())
	assert.Len(t, rec.Of(adaptivelimit.EventWaited), 2)

	p1.Release()
	c.Finish(3)
	c.Finish(4)
	for _, f := range []*async.Future[string]{f3, f4} {
		_, err := result(t, f)
		require.NoError(t, err)
	}
	assert.Zero(t, l.InFlight())
}

// SPEC AL-10: a sample's latency runs, on the limiter's clock, from the call's admission
// (not its arrival: the wait does not count) to its return; the calls in flight it
// carries are those once it was let in, itself included.
func TestSampleLatency(t *testing.T) {
	l, clk, _ := newManual(t, opts(aimd(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
	held := acquire(t, l)
	call := adaptivelimit.DecorateFunc(l, func(context.Context, struct{}) (int, error) {
		clk.Advance(20 * time.Millisecond)
		return 0, nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := call(context.Background(), struct{}{})
		assert.NoError(t, err)
	}()
	contracttest.Eventually(t, func() bool { return l.Queued() == 1 }, "waiter queued")
	clk.Advance(50 * time.Millisecond)
	held.Release() // no sample
	<-done
	s := l.Snapshot()
	assert.Equal(t, 20*time.Millisecond, s.Latency, "from admission to return")
	assert.Equal(t, 2, s.Limit, "the sample ended a round")

	p := acquire(t, l)
	assert.Equal(t, 1, p.InFlight())
	clk.Advance(7 * time.Millisecond)
	p.Record(nil)
	assert.Equal(t, 7*time.Millisecond, l.Snapshot().Latency)
}

// SPEC AL-11: what an outcome is to the algorithm. A success or an ordinary error is a
// sample; context.DeadlineExceeded, DropOn, a call whose context passed its deadline and
// (AIMD) a call slower than LatencyThreshold are drops; a cancellation (async.ErrCanceled,
// context.Canceled), IgnoreOn (which wins over DropOn) and a panic leave no sample. With
// AIMD from a limit of 2, a sample raises the limit to 3, a drop halves it, and no sample
// leaves it at 2.
func TestOutcomes(t *testing.T) {
	errOverload, errIgnored, errBusiness := errors.New("overloaded"), errors.New("ignored"), errors.New("not found")
	const sample, drop, none = 3, 1, 2
	for _, tc := range []struct {
		name string
		opts []adaptivelimit.Option
		run  func(ctx context.Context, cancel context.CancelFunc, clk *clock.Manual) error
		want int
	}{
		{"success", nil, func(context.Context, context.CancelFunc, *clock.Manual) error { return nil }, sample},
		{"ordinary error", nil, func(context.Context, context.CancelFunc, *clock.Manual) error { return errBusiness }, sample},
		{"deadline exceeded", nil, func(context.Context, context.CancelFunc, *clock.Manual) error {
			return fmt.Errorf("query: %w", context.DeadlineExceeded)
		}, drop},
		{"DropOn", []adaptivelimit.Option{adaptivelimit.DropOn(errOverload)},
			func(context.Context, context.CancelFunc, *clock.Manual) error { return errOverload }, drop},
		{"context past its deadline", nil, func(_ context.Context, cancel context.CancelFunc, _ *clock.Manual) error {
			cancel() // an outer timeout: the call is canceled as its deadline passes
			return async.ErrCanceled
		}, drop},
		{"slower than LatencyThreshold", nil, func(_ context.Context, _ context.CancelFunc, clk *clock.Manual) error {
			clk.Advance(time.Second + 1)
			return nil
		}, drop},
		{"as slow as LatencyThreshold", nil, func(_ context.Context, _ context.CancelFunc, clk *clock.Manual) error {
			clk.Advance(time.Second)
			return nil
		}, sample},
		{"context canceled", nil, func(context.Context, context.CancelFunc, *clock.Manual) error { return context.Canceled }, none},
		{"future canceled", nil, func(context.Context, context.CancelFunc, *clock.Manual) error { return async.ErrCanceled }, none},
		{"IgnoreOn", []adaptivelimit.Option{adaptivelimit.IgnoreOn(errIgnored)},
			func(context.Context, context.CancelFunc, *clock.Manual) error { return errIgnored }, none},
		{"IgnoreOn wins over DropOn", []adaptivelimit.Option{adaptivelimit.DropOn(errIgnored), adaptivelimit.IgnoreOn(context.DeadlineExceeded, errIgnored)},
			func(context.Context, context.CancelFunc, *clock.Manual) error {
				return errors.Join(errIgnored, context.DeadlineExceeded)
			}, none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clk, _ := newManual(t, opts(aimd(2), tc.opts)...)
			call := adaptivelimit.DecorateFunc(l, func(ctx context.Context, cancel context.CancelFunc) (int, error) {
				return 0, tc.run(ctx, cancel, clk)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, _ = call(expiringCtx{ctx}, cancel)
			assert.Equal(t, tc.want, l.Limit())
			assert.Zero(t, l.InFlight())

			// Through a permit, the same (but for the context, which a permit does not know).
			if tc.name == "context past its deadline" {
				return
			}
			l, clk, _ = newManual(t, opts(aimd(2), tc.opts)...)
			p := acquire(t, l)
			ctx, cancel = context.WithCancel(context.Background())
			defer cancel()
			p.Record(tc.run(ctx, cancel, clk))
			assert.Equal(t, tc.want, l.Limit(), "through a permit")
		})
	}
}

// SPEC AL-12: the algorithm moves the limit once per round, not once per sample. A round
// ends with the first sample of a call let in after it began, once it holds half as many
// samples as the most calls in flight with one of them; samples of calls let in before
// the limit last changed are left out.
func TestRounds(t *testing.T) {
	l, _, rec := newManual(t, aimd(10)...)
	p := make([]adaptivelimit.Permit, 5)
	for i := range p {
		p[i] = acquire(t, l)
	}
	p[4].Record(nil) // 5 in flight with it: the round needs 3 samples
	p[3].Record(nil)
	assert.Equal(t, 10, l.Limit())
	p[2].Record(nil)
	assert.Equal(t, 11, l.Limit(), "3 samples, the most in flight 5 (not app-limited under 10): +1")
	p[1].Record(context.DeadlineExceeded)
	p[0].Record(context.DeadlineExceeded)
	assert.Equal(t, 11, l.Limit(), "let in before the change: their drops are left out")

	q := make([]adaptivelimit.Permit, 6)
	for i := range q {
		q[i] = acquire(t, l)
	}
	for i := 5; i >= 3; i-- {
		q[i].Record(context.DeadlineExceeded) // 6 in flight: the round needs 3 samples
	}
	assert.Equal(t, 5, l.Limit(), "three drops in one round: one decrease, 11·0.5")
	for _, p := range q[:3] {
		p.Record(context.DeadlineExceeded)
	}
	assert.Equal(t, 5, l.Limit())
	assert.Zero(t, l.InFlight())

	changed := rec.Of(adaptivelimit.EventChanged)
	require.Len(t, changed, 2)
	assert.Equal(t, [2]int{10, 11}, limits(changed[0]))
	assert.Equal(t, [2]int{11, 5}, limits(changed[1]))
}

// SPEC AL-13: AdaptiveLimitChanged is published when the whole limit changes, not when
// the algorithm moves it by a fraction, with the clock time and both limits.
func TestChangedEvents(t *testing.T) {
	l, clk, rec := newManual(t, adaptivelimit.UseAlgorithm(adaptivelimit.Gradient2))
	round := func() { // 11 calls in flight: not app-limited under a limit up to 22
		p := make([]adaptivelimit.Permit, 11)
		for i := range p {
			p[i] = acquire(t, l)
		}
		clk.Advance(10 * time.Millisecond)
		for i := len(p) - 1; i >= 0; i-- {
			p[i].Record(nil)
		}
	}
	round() // at the baseline: 20 + 0.2·√20 = 20.89
	assert.Equal(t, 20, l.Limit())
	assert.Empty(t, rec.Events(), "20.89: the limit is still 20")
	round() // 20.89 + 0.2·√20.89 = 21.80
	assert.Equal(t, 21, l.Limit())
	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, policy.Event{Kind: adaptivelimit.EventChanged, Instance: "Svc.Call", At: 20 * time.Millisecond,
		Attrs: policy.EventAttrs{slog.Int("limit", 21), slog.Int("previous_limit", 20)}}, events[0])
	assert.Equal(t, "AdaptiveLimitChanged Svc.Call at=20ms limit=21 previous_limit=20", events[0].String())
	s := l.Snapshot()
	assert.Equal(t, 10*time.Millisecond, s.Latency)
	assert.Equal(t, 10*time.Millisecond, s.Baseline)
}

// SPEC AL-14: an admitted synchronous call that does not wait, and a rejected one,
// allocate nothing; neither do the permits of the direct API.
func TestAllocations(t *testing.T) {
	for _, algo := range []string{adaptivelimit.AIMD, adaptivelimit.Gradient2, adaptivelimit.Vegas} {
		for _, clk := range []clock.Clock{clock.System(), clock.NewManual()} {
			l, err := adaptivelimit.New(adaptivelimit.UseAlgorithm(algo), adaptivelimit.WithClock(clk),
				adaptivelimit.MaxWait(time.Second), adaptivelimit.OnEvent(func(policy.Event) {}))
			require.NoError(t, err)
			call := adaptivelimit.DecorateFunc(l, func(_ context.Context, n int) (int, error) { return n, nil })
			ctx := context.Background()
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted, %s", algo)
			assert.Zero(t, testing.AllocsPerRun(1000, func() {
				p, _ := l.TryAcquire()
				p.Record(nil)
				p, _ = l.Acquire(ctx)
				p.Release()
			}), "permits, %s", algo)
		}
	}

	l, err := adaptivelimit.New(opts(fixed(1), []adaptivelimit.Option{adaptivelimit.OnEvent(func(policy.Event) {})})...)
	require.NoError(t, err)
	call := adaptivelimit.DecorateFunc(l, func(_ context.Context, n int) (int, error) { return n, nil })
	held, ok := l.TryAcquire()
	require.True(t, ok)
	ctx := context.Background()
	var rejected error
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, rejected = call(ctx, 1) }), "rejected")
	require.ErrorIs(t, rejected, adaptivelimit.ErrLimitExceeded)
	held.Release()
}

// SPEC AL-15: a disabled limiter lets every call through, counts nothing and publishes
// nothing, but refuses a nil or done context with its error as is.
func TestDisabled(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.Enabled(false)})...)
	calls := 0
	var call decorate.Func[int, int]
	call = adaptivelimit.DecorateFunc(l, func(ctx context.Context, depth int) (int, error) {
		calls++
		if depth < 3 {
			return call(ctx, depth+1)
		}
		return depth, nil
	})
	got, err := call(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, 3, got)
	assert.Equal(t, 4, calls)
	p, ok := l.TryAcquire()
	assert.True(t, ok)
	p.Record(context.DeadlineExceeded)
	p, err = l.Acquire(context.Background())
	require.NoError(t, err)
	p.Release()
	for _, o := range ctxtest.OverContexts() {
		_, err := l.Acquire(o.Ctx)
		require.ErrorIs(t, err, o.Want, o.Name)
		assert.NotErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
		_, err = call(o.Ctx, 0)
		require.ErrorIs(t, err, o.Want, o.Name)
		_, _, err = adaptivelimit.DecorateAsyncFunc(l, contracttest.NewCalls().Next)(o.Ctx, 1).Result()
		require.ErrorIs(t, err, o.Want, o.Name)
	}
	fut := adaptivelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[string] { return nil })(context.Background(), 1)
	_, _, err = fut.Result()
	require.ErrorIs(t, err, async.ErrNilFuture)
	assert.Equal(t, adaptivelimit.Snapshot{Instance: "Svc.Call", Algorithm: adaptivelimit.Vegas, Limit: 1, MinLimit: 1, MaxLimit: 1},
		l.Snapshot())
	assert.Empty(t, rec.Events())
	assert.Zero(t, clk.PendingTasks())
}

func TestNewPolicy(t *testing.T) {
	l, _, _ := newManual(t, fixed(1)...)
	p := adaptivelimit.NewPolicy[string](l)
	assert.Equal(t, adaptivelimit.Layer, p.Layer())
	var call func(context.Context) (string, error)
	call = p.Decorate(func(ctx context.Context) (string, error) {
		_, err := call(ctx)
		return "outer", err
	})
	got, err := call(context.Background())
	requireExceeded(t, err)
	assert.Equal(t, "outer", got)
	assert.Zero(t, l.InFlight())

	c := contracttest.NewCalls()
	acall := p.DecorateAsync(func(ctx context.Context) *async.Future[string] { return c.Next(ctx, 1) })
	f := acall(context.Background())
	_, err = result(t, acall(context.Background()))
	requireExceeded(t, err)
	c.Finish(1)
	v, err := result(t, f)
	require.NoError(t, err)
	assert.Equal(t, "done", v)
}

// limits returns the limits of an EventChanged: the previous one and the new one.
func limits(e policy.Event) [2]int {
	return [2]int{int(e.Attr("previous_limit").Int64()), int(e.Attr("limit").Int64())}
}

// SPEC AL-21: the whole-number limit after a backoff is exact: with BackoffRatio 0.57, a
// limit of 100 falls to 57 (100 × 0.57 is 56.99999999999999 in float64).
func TestAL21_BackoffIsExact(t *testing.T) {
	l, _, rec := newManual(t, adaptivelimit.UseAlgorithm(adaptivelimit.AIMD), adaptivelimit.InitialLimit(100),
		adaptivelimit.MaxLimit(200), adaptivelimit.BackoffRatio(0.57))
	p := acquire(t, l)
	p.Record(context.DeadlineExceeded)
	assert.Equal(t, 57, l.Limit())
	changed := rec.Of(adaptivelimit.EventChanged)
	require.Len(t, changed, 1)
	assert.Equal(t, 57, int(changed[0].Attr("limit").Int64()))
}
