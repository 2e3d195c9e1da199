package circuitbreaker_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

// reconfigure applies the configuration in force changed by edit, and requires that it
// was accepted.
func reconfigure(t *testing.T, b *cb.Breaker, edit func(c *cb.Config)) cb.Config {
	t.Helper()
	c := b.Config()
	edit(&c)
	require.NoError(t, b.Reconfigure(c))
	require.Equal(t, c, b.Config())
	return c
}

// optionsOf returns the options that set every setting of c.
func optionsOf(c cb.Config) []cb.Option {
	return []cb.Option{cb.FailureRateThreshold(c.FailureRateThreshold), cb.SlidingWindowType(c.SlidingWindowType),
		cb.SlidingWindowSize(c.SlidingWindowSize), cb.MinimumCalls(c.MinimumCalls), cb.WaitInOpen(c.WaitInOpen),
		cb.PermittedInHalfOpen(c.PermittedInHalfOpen), cb.MaxWaitInHalfOpen(c.MaxWaitInHalfOpen),
		cb.SlowCallThreshold(c.SlowCallThreshold), cb.SlowCallRateThreshold(c.SlowCallRateThreshold),
		cb.IgnoreOn(c.IgnoreOn...), cb.RecordOn(c.RecordOn...), cb.Enabled(!c.Disabled)}
}

// defaultConfig returns the configuration of a breaker built with no option.
func defaultConfig(t *testing.T) cb.Config {
	t.Helper()
	b, err := cb.New()
	require.NoError(t, err)
	return b.Config()
}

// changed returns the Changed lists of the ConfigChanged events.
func (r *recorder) changed() [][]string {
	var out [][]string
	for _, e := range r.all() {
		if e.Kind == policy.ConfigChanged {
			out = append(out, e.Changed)
		}
	}
	return out
}

// SPEC RC-1: new thresholds apply from the next outcome recorded; Reconfigure itself
// opens nothing, and the window keeps its outcomes.
func TestReconfigure_RC1_ThresholdsFromNextOutcome(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(10), cb.MinimumCalls(10), cb.FailureRateThreshold(50))
	f.do(repeat(ok, 6)...)
	f.do(repeat(fail, 4)...) // 40%
	require.Equal(t, cb.Closed, f.state())

	reconfigure(t, f.b, func(c *cb.Config) { c.FailureRateThreshold = 40 })
	require.Equal(t, cb.Closed, f.state(), "not before the next outcome")
	assert.Equal(t, 10, f.b.Snapshot().BufferedCalls, "the window keeps its outcomes")
	f.do(ok) // the oldest success leaves: still 4 of 10 = 40%
	require.Equal(t, cb.Open, f.state())

	// MinimumCalls, and the snapshot's rates with it.
	g := newFixture(t, cb.SlidingWindowSize(10), cb.MinimumCalls(10))
	g.do(fail, fail, fail, fail)
	assert.Equal(t, -1.0, g.b.Snapshot().FailureRate, "fewer than MinimumCalls")
	reconfigure(t, g.b, func(c *cb.Config) { c.MinimumCalls = 4 })
	assert.Equal(t, 100.0, g.b.Snapshot().FailureRate)
	require.Equal(t, cb.Closed, g.state())
	g.do(ok) // 4 of 5 failed
	require.Equal(t, cb.Open, g.state())

	// The slow-call rate threshold.
	h := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4), cb.SlowCallThreshold(time.Second))
	h.do(slow(2*time.Second, nil), slow(2*time.Second, nil), ok, ok)
	require.Equal(t, cb.Closed, h.state(), "50% slow < 100%")
	reconfigure(t, h.b, func(c *cb.Config) { c.SlowCallRateThreshold = 25 })
	h.do(ok) // 1 slow of 4
	require.Equal(t, cb.Open, h.state())

	assert.Equal(t, [][]string{{"failureRateThreshold"}}, f.rec.changed())
	assert.Equal(t, []string{"closed→open"}, f.rec.transitions())
}

// SPEC RC-1: a call in flight is classified by the configuration that admitted it (its
// SlowCallThreshold and error lists); the calls admitted after the change by the new one.
func TestReconfigure_RC1_CallInFlightKeepsItsClassification(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(10), cb.MinimumCalls(10), cb.SlowCallThreshold(time.Second))
	var during func()
	call := cb.DecorateFunc(f.b, func(ctx context.Context, s step) (string, error) {
		if during != nil {
			during()
			during = nil
		}
		require.NoError(t, f.clk.Sleep(ctx, s.sleep))
		return "done", s.err
	})
	during = func() {
		reconfigure(t, f.b, func(c *cb.Config) {
			c.SlowCallThreshold = 10 * time.Second
			c.IgnoreOn = []error{errIgnored}
		})
	}
	_, err := call(context.Background(), slow(2*time.Second, errIgnored))
	require.ErrorIs(t, err, errIgnored)
	s := f.b.Snapshot()
	assert.Equal(t, 1, s.BufferedCalls, "not ignored: admitted before IgnoreOn listed it")
	assert.Equal(t, 1, s.FailedCalls)
	assert.Equal(t, 1, s.SlowCalls, "slow by the 1s it was admitted with")

	_, err = call(context.Background(), slow(2*time.Second, errIgnored))
	require.ErrorIs(t, err, errIgnored)
	_, err = call(context.Background(), slow(2*time.Second, nil))
	require.NoError(t, err)
	s = f.b.Snapshot()
	assert.Equal(t, 2, s.BufferedCalls, "ignored now")
	assert.Equal(t, 1, s.SlowCalls, "2s is not slow under 10s")

	// RecordOn, asynchronously: the outcome comes after the change.
	a := newAsyncFixture(t, cb.SlidingWindowSize(10), cb.MinimumCalls(10))
	_, c1 := a.start()
	reconfigure(t, a.b, func(c *cb.Config) { c.RecordOn = []error{errOther} })
	_, c2 := a.start()
	c1("", errBoom) // a failure: every error was one when it was admitted
	c2("", errBoom) // a success: only errOther is a failure now
	s = a.b.Snapshot()
	assert.Equal(t, 2, s.BufferedCalls)
	assert.Equal(t, 1, s.FailedCalls)
}

// SPEC RC-1: an open breaker keeps the deadline it was given when WaitInOpen changes; the
// next open state waits the new WaitInOpen.
func TestReconfigure_RC1_WaitInOpenKeepsScheduledTransition(t *testing.T) {
	f := openedBreaker(t, 1, cb.WaitInOpen(time.Minute))
	reconfigure(t, f.b, func(c *cb.Config) { c.WaitInOpen = 10 * time.Second })
	f.clk.Advance(30 * time.Second)
	assert.Equal(t, cb.Open, f.rejected().State())
	assert.Equal(t, 30*time.Second, f.rec.lastRejection(t).RetryAfter, "still the minute it was given")
	f.clk.Advance(30 * time.Second)
	f.do(fail) // the trial fails: open again, now for 10s
	require.Equal(t, cb.Open, f.state())
	f.clk.Advance(10*time.Second - 1)
	f.rejected()
	assert.Equal(t, time.Nanosecond, f.rec.lastRejection(t).RetryAfter, "the new 10s")
	f.clk.Advance(1)
	f.do(ok)
	require.Equal(t, cb.Closed, f.state())
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@1m0s", "half-open→open@1m0s",
		"open→half-open@1m10s", "half-open→closed@1m10s"}, f.rec.transitionsAt())
}

// SPEC RC-1: a half-open breaker keeps the MaxWaitInHalfOpen bound it was given; the next
// half-open state is bounded by the new one.
func TestReconfigure_RC1_MaxWaitInHalfOpenKeepsScheduledTransition(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(10*time.Second), cb.PermittedInHalfOpen(1),
		cb.MaxWaitInHalfOpen(time.Minute))
	_, c := a.start()
	c("", errBoom)
	a.clk.Advance(10 * time.Second)
	_, stuck := a.start()
	require.NotNil(t, stuck, "the trial")
	reconfigure(t, a.b, func(c *cb.Config) { c.MaxWaitInHalfOpen = 5 * time.Second })

	a.clk.Advance(time.Minute - 1)
	_, c = a.start()
	require.Nil(t, c, "rejected: still half-open, within the minute it was given")
	require.Equal(t, cb.HalfOpen, a.state())
	a.clk.Advance(1)
	_, c = a.start()
	require.Nil(t, c)
	require.Equal(t, cb.Open, a.state(), "given up on at 1m10s")

	a.clk.Advance(10 * time.Second)
	_, stuck = a.start()
	require.NotNil(t, stuck, "a new trial")
	a.clk.Advance(5 * time.Second)
	_, c = a.start()
	require.Nil(t, c)
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@10s", "half-open→open@1m10s",
		"open→half-open@1m20s", "half-open→open@1m25s"}, a.rec.transitionsAt())
}

// SPEC RC-1: PermittedInHalfOpen raised while half-open lets more trials through.
func TestReconfigure_RC1_PermittedInHalfOpenRaised(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(2))
	_, c := a.start()
	c("", errBoom)
	a.clk.Advance(time.Second)
	_, t1 := a.start()
	_, t2 := a.start()
	require.NotNil(t, t2)
	_, t3 := a.start()
	require.Nil(t, t3, "two trials taken")

	reconfigure(t, a.b, func(c *cb.Config) { c.PermittedInHalfOpen = 3 })
	_, t3 = a.start()
	require.NotNil(t, t3, "a third trial")
	t1("ok", nil)
	t2("ok", nil)
	require.Equal(t, cb.HalfOpen, a.state(), "three trials decide now")
	t3("", errBoom) // 1 of 3 < 50%
	require.Equal(t, cb.Closed, a.state())
}

// SPEC RC-1: PermittedInHalfOpen lowered while half-open admits no more trials; the
// trials in flight are waited for, and then every trial recorded decides. With none in
// flight and enough recorded, Reconfigure decides at once.
func TestReconfigure_RC1_PermittedInHalfOpenLowered(t *testing.T) {
	a := newAsyncFixture(t, cb.SlidingWindowSize(1), cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(4))
	_, c := a.start()
	c("", errBoom)
	a.clk.Advance(time.Second)
	_, t1 := a.start()
	_, t2 := a.start()
	_, t3 := a.start()
	t1("ok", nil)
	reconfigure(t, a.b, func(c *cb.Config) { c.PermittedInHalfOpen = 1 })
	_, late := a.start()
	require.Nil(t, late, "no more trials: 1 recorded, 2 in flight")
	t2("ok", nil)
	require.Equal(t, cb.HalfOpen, a.state(), "a trial is still in flight")
	t3("", errBoom) // 1 of 3 failed
	require.Equal(t, cb.Closed, a.state())

	// None in flight: the change decides, after its event.
	f := openedBreaker(t, 3)
	f.clk.Advance(10 * time.Second)
	f.do(fail, fail)
	require.Equal(t, cb.HalfOpen, f.state())
	reconfigure(t, f.b, func(c *cb.Config) { c.PermittedInHalfOpen = 2 })
	require.Equal(t, cb.Open, f.state())
	kinds := []policy.EventKind{}
	for _, e := range f.rec.all() {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []policy.EventKind{cb.EventTransition, cb.EventTransition,
		policy.ConfigChanged, cb.EventTransition}, kinds)
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@10s", "half-open→open@10s"}, f.rec.transitionsAt())
	f.clk.Advance(10 * time.Second)
	f.do(ok, ok)
	require.Equal(t, cb.Closed, f.state(), "two trials now")

	// Past MaxWaitInHalfOpen the breaker has given up already: the next call finds it.
	g := openedBreaker(t, 3, cb.MaxWaitInHalfOpen(time.Minute))
	g.clk.Advance(10 * time.Second)
	g.do(ok, ok)
	g.clk.Advance(time.Minute)
	reconfigure(t, g.b, func(c *cb.Config) { c.PermittedInHalfOpen = 2 })
	require.Equal(t, cb.HalfOpen, g.state())
	g.rejected()
	assert.Equal(t, []string{"closed→open@0s", "open→half-open@10s", "half-open→open@1m10s"}, g.rec.transitionsAt())
}

// SPEC RC-1: a new SlidingWindowSize resizes the window at once, keeping its most recent
// outcomes; the rates follow the new window.
func TestReconfigure_RC1_WindowSizeKeepsRecentOutcomes(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(10), cb.MinimumCalls(5), cb.FailureRateThreshold(60))
	f.do(fail, fail)
	f.do(repeat(ok, 8)...)
	reconfigure(t, f.b, func(c *cb.Config) { c.SlidingWindowSize = 5 })
	s := f.b.Snapshot()
	assert.Equal(t, 5, s.BufferedCalls)
	assert.Zero(t, s.FailedCalls, "the failures were the oldest")

	reconfigure(t, f.b, func(c *cb.Config) { c.SlidingWindowSize = 8 })
	assert.Equal(t, 5, f.b.Snapshot().BufferedCalls, "growing adds room, not history")
	f.do(fail, fail, fail)
	s = f.b.Snapshot()
	assert.Equal(t, 8, s.BufferedCalls)
	assert.Equal(t, 3, s.FailedCalls)
	require.Equal(t, cb.Closed, f.state(), "3 of 8 < 60%")
	reconfigure(t, f.b, func(c *cb.Config) { c.SlidingWindowSize = 4 })
	assert.Equal(t, 75.0, f.b.Snapshot().FailureRate, "3 of the last 4")
	f.do(fail) // 4 of 4
	require.Equal(t, cb.Open, f.state())

	// A time-based window keeps its recent seconds.
	g := newFixture(t, cb.SlidingWindowType(cb.TimeBased), cb.SlidingWindowSize(10), cb.MinimumCalls(1),
		cb.FailureRateThreshold(100))
	g.do(ok)
	g.clk.Advance(5 * time.Second)
	g.do(ok, fail)
	reconfigure(t, g.b, func(c *cb.Config) { c.SlidingWindowSize = 3 })
	s = g.b.Snapshot()
	assert.Equal(t, 2, s.BufferedCalls, "only the last 3 seconds")
	assert.Equal(t, 50.0, s.FailureRate)
	g.clk.Advance(3 * time.Second)
	assert.Zero(t, g.b.Snapshot().BufferedCalls, "a 3-second window now")
}

// SPEC RC-1: changing enabled moves the breaker to its new initial state at once, as
// Reset does; calls in flight are not recorded; Reset returns to it from then on.
func TestReconfigure_RC1_EnabledMovesToInitialState(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(2), cb.MinimumCalls(2))
	f.do(fail)
	call := cb.DecorateFunc(f.b, func(context.Context, struct{}) (string, error) {
		reconfigure(t, f.b, func(c *cb.Config) { c.Disabled = true })
		return "", errBoom
	})
	_, _ = call(context.Background(), struct{}{})
	require.Equal(t, cb.Disabled, f.state())
	f.do(repeat(fail, 5)...)
	require.Equal(t, cb.Disabled, f.state(), "nothing is recorded")
	f.b.Reset()
	require.Equal(t, cb.Disabled, f.state(), "Reset returns to the state the configuration says")

	_ = f.b.TransitionTo(cb.ForcedOpen)
	reconfigure(t, f.b, func(c *cb.Config) { c.Disabled = false })
	require.Equal(t, cb.Closed, f.state())
	assert.Zero(t, f.b.Snapshot().BufferedCalls, "an empty window")
	f.do(fail, fail)
	require.Equal(t, cb.Open, f.state())
	f.b.Reset()
	require.Equal(t, cb.Closed, f.state())

	assert.Equal(t, []string{"closed→disabled", "disabled→forced-open", "forced-open→closed",
		"closed→open", "open→closed"}, f.rec.transitions())
	assert.Equal(t, [][]string{{"enabled"}, {"enabled"}}, f.rec.changed())
	all := f.rec.all()
	assert.Equal(t, policy.ConfigChanged, all[0].Kind, "the change, then the transition it made")
	assert.Equal(t, cb.EventTransition, all[1].Kind)
}

// SPEC RC-2: an invalid configuration is refused with New's error and changes nothing:
// the configuration, the state, the window and its deadlines stay; no event.
func TestReconfigure_RC2_InvalidChangesNothing(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4))
	f.do(fail, ok)
	before, snap := f.b.Config(), f.b.Snapshot()
	for _, tc := range []struct {
		edit func(c *cb.Config)
		code string
		key  string
	}{
		{func(c *cb.Config) { c.FailureRateThreshold = 0 }, r4c.OutOfRange, "circuitBreaker.failureRateThreshold"},
		{func(c *cb.Config) { c.SlowCallRateThreshold = 101 }, r4c.OutOfRange, "circuitBreaker.slowCallRateThreshold"},
		{func(c *cb.Config) { c.SlidingWindowSize = cb.MaxWindowSize + 1 }, r4c.OutOfRange, "circuitBreaker.slidingWindowSize"},
		{func(c *cb.Config) { c.SlidingWindowType = "SESSION_BASED" }, r4c.OutOfRange, "circuitBreaker.slidingWindowType"},
		{func(c *cb.Config) { c.MinimumCalls = 0 }, r4c.OutOfRange, "circuitBreaker.minimumCalls"},
		{func(c *cb.Config) { c.WaitInOpen = -1 }, r4c.NegativeDuration, "circuitBreaker.waitInOpen"},
		{func(c *cb.Config) { c.PermittedInHalfOpen = 0 }, r4c.OutOfRange, "circuitBreaker.permittedInHalfOpen"},
		{func(c *cb.Config) { c.MaxWaitInHalfOpen = 0 }, r4c.OutOfRange, "circuitBreaker.maxWaitInHalfOpen"},
		{func(c *cb.Config) { c.SlowCallThreshold = -time.Second }, r4c.NegativeDuration, "circuitBreaker.slowCallThreshold"},
		// Invalid and a change of window type: the invalid value is reported, as New would.
		{func(c *cb.Config) { c.MinimumCalls, c.SlidingWindowType = 0, cb.TimeBased }, r4c.OutOfRange, "circuitBreaker.minimumCalls"},
		// Valid but for one value: the valid ones are not applied either.
		{func(c *cb.Config) { c.WaitInOpen, c.Disabled, c.MinimumCalls = time.Hour, true, -1 }, r4c.OutOfRange, "circuitBreaker.minimumCalls"},
	} {
		c := before
		tc.edit(&c)
		err := f.b.Reconfigure(c)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", c)
		assert.Equal(t, tc.code, ce.Code)
		assert.Equal(t, tc.key, ce.Key)
		_, newErr := cb.New(optionsOf(c)...)
		assert.Equal(t, newErr, err, "the error New returns")
		assert.Equal(t, err, f.b.CheckReconfigure(c), "CheckReconfigure agrees")
	}
	assert.Equal(t, before, f.b.Config())
	assert.Equal(t, snap, f.b.Snapshot())
	assert.Empty(t, f.rec.all())
	f.do(fail, fail) // 3 of 4 with the old MinimumCalls
	require.Equal(t, cb.Open, f.state())
}

// SPEC RC-2: the sliding window's type cannot change live: R4C-REG-012, and nothing
// changes, not even the settings that could have.
func TestReconfigure_RC2_WindowTypeIsNotLive(t *testing.T) {
	f := newFixture(t, cb.SlidingWindowSize(4), cb.MinimumCalls(4))
	f.do(fail)
	before, snap := f.b.Config(), f.b.Snapshot()
	c := before
	c.SlidingWindowType, c.SlidingWindowSize, c.FailureRateThreshold, c.Disabled = cb.TimeBased, 60, 10, true
	err := f.b.Reconfigure(c)
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.NotLive, ce.Code)
	assert.Equal(t, "R4C-REG-012", ce.Code)
	assert.Equal(t, "circuitBreaker.slidingWindowType", ce.Key)
	assert.Equal(t, "TIME_BASED", ce.Value)
	assert.Contains(t, err.Error(), "COUNT_BASED")
	assert.Equal(t, err, f.b.CheckReconfigure(c))
	assert.Equal(t, before, f.b.Config())
	assert.Equal(t, snap, f.b.Snapshot())
	assert.Equal(t, cb.Closed, f.state())
	assert.Empty(t, f.rec.all())

	g := newFixture(t, cb.SlidingWindowType(cb.TimeBased))
	c = g.b.Config()
	c.SlidingWindowType = cb.CountBased
	assert.Equal(t, r4c.NotLive, r4c.CodeOf(g.b.Reconfigure(c)))
	assert.Equal(t, cb.TimeBased, g.b.Config().SlidingWindowType)
}

// SPEC RC-3: ConfigChanged names each attribute that changed, sorted, by its
// configuration name ("ignoreOn" and "recordOn" for the lists set in code); a
// configuration equal to the one in force (error lists compared by identity, not by the
// slice) publishes nothing.
func TestReconfigure_RC3_EventListsChanges(t *testing.T) {
	f := newFixture(t, cb.IgnoreOn(errIgnored))
	f.clk.Advance(time.Minute)
	base := f.b.Config()

	same := base
	same.IgnoreOn = []error{errIgnored} // another slice, the same errors
	require.NoError(t, f.b.Reconfigure(same))
	require.NoError(t, f.b.Reconfigure(base))
	require.NoError(t, f.b.CheckReconfigure(defaultConfig(t)))
	assert.Empty(t, f.rec.all(), "nothing changed, nothing applied")

	for _, tc := range []struct {
		edit func(c *cb.Config)
		want []string
	}{
		{func(c *cb.Config) { c.FailureRateThreshold = 20 }, []string{"failureRateThreshold"}},
		{func(c *cb.Config) { c.SlidingWindowSize = 50 }, []string{"slidingWindowSize"}},
		{func(c *cb.Config) { c.MinimumCalls = 7 }, []string{"minimumCalls"}},
		{func(c *cb.Config) { c.WaitInOpen = time.Second }, []string{"waitInOpen"}},
		{func(c *cb.Config) { c.PermittedInHalfOpen = 2 }, []string{"permittedInHalfOpen"}},
		{func(c *cb.Config) { c.MaxWaitInHalfOpen = time.Hour }, []string{"maxWaitInHalfOpen"}},
		{func(c *cb.Config) { c.SlowCallThreshold = time.Second }, []string{"slowCallThreshold"}},
		{func(c *cb.Config) { c.SlowCallRateThreshold = 90 }, []string{"slowCallRateThreshold"}},
		{func(c *cb.Config) { c.IgnoreOn = []error{errOther} }, []string{"ignoreOn"}},
		{func(c *cb.Config) { c.RecordOn = []error{errBoom} }, []string{"recordOn"}},
		{func(c *cb.Config) { c.Disabled = true }, []string{"enabled"}},
		{func(c *cb.Config) {
			c.WaitInOpen, c.FailureRateThreshold, c.SlidingWindowSize, c.RecordOn = 2*time.Second, 30, 40, nil
		}, []string{"failureRateThreshold", "recordOn", "slidingWindowSize", "waitInOpen"}},
	} {
		before := len(f.rec.all())
		reconfigure(t, f.b, tc.edit)
		all := f.rec.all()[before:]
		require.NotEmpty(t, all)
		assert.Equal(t, policy.Event{Kind: policy.ConfigChanged, Instance: "svc", At: time.Minute, Changed: tc.want}, all[0])
	}

	// The breaker keeps its own copy of the error lists.
	c := f.b.Config()
	list := []error{errBoom}
	c.IgnoreOn = list
	require.NoError(t, f.b.Reconfigure(c))
	list[0] = errOther
	assert.Equal(t, []error{errBoom}, f.b.Config().IgnoreOn)
}

// Calls stay allocation-free after a change (the hot path reads the rules in force).
func TestReconfigure_AllocsAfterChange(t *testing.T) {
	b := allocBreaker(t, clock.NewManual())
	okCall := cb.DecorateFunc(b, okFunc)
	ctx := context.Background()
	c := b.Config()
	c.SlowCallThreshold, c.IgnoreOn = time.Hour, []error{errIgnored}
	require.NoError(t, b.Reconfigure(c))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 0) }))
}

// SPEC RC-1 under the race detector: synchronous and asynchronous calls with every kind
// of outcome, snapshots, and Reconfigures of every live setting at once. The breaker stays
// consistent: a snapshot's counts add up and stay within the window, and once the calls
// are over it behaves exactly as its final configuration says.
func TestReconfigure_RC1_ConcurrentCalls(t *testing.T) {
	rec := &recorder{}
	b, err := cb.New(cb.SlidingWindowSize(8), cb.MinimumCalls(4), cb.WaitInOpen(0), cb.PermittedInHalfOpen(2),
		cb.SlowCallThreshold(time.Millisecond), cb.OnEvent(rec.listen))
	require.NoError(t, err)
	outcomeOf := func(i int) error {
		switch i % 5 {
		case 0:
			return errBoom
		case 1:
			return errIgnored
		case 2:
			return errOther
		}
		return nil
	}
	call := cb.DecorateFunc(b, func(_ context.Context, i int) (int, error) {
		runtime.Gosched()
		return i, outcomeOf(i)
	})
	acall := cb.DecorateAsyncFunc(b, func(_ context.Context, i int) *async.Future[int] {
		f, complete := async.NewPromise[int]()
		go func() {
			runtime.Gosched()
			complete(i, outcomeOf(i))
		}()
		return f
	})
	var wg sync.WaitGroup
	var done atomic.Int64
	stop := make(chan struct{})
	for g := range 6 {
		wg.Go(func() {
			for i := g; ; i += 7 {
				select {
				case <-stop:
					return
				default:
				}
				if g%2 == 0 {
					_, _ = call(context.Background(), i)
				} else {
					_, _ = acall(context.Background(), i).Await(context.Background())
				}
				if g == 5 {
					s := b.Snapshot()
					assert.GreaterOrEqual(t, s.BufferedCalls, max(s.FailedCalls, s.SlowCalls))
					assert.LessOrEqual(t, s.BufferedCalls, 12, "within the largest window")
				}
				done.Add(1)
			}
		})
	}
	rng := rand.New(rand.NewPCG(11, 12))
	n := 0
	for ; n < 300 || done.Load() < 3000; n++ {
		c := b.Config()
		switch rng.IntN(8) {
		case 0:
			c.FailureRateThreshold = float64(10 + rng.IntN(91))
		case 1:
			c.SlidingWindowSize = 1 + rng.IntN(12)
		case 2:
			c.MinimumCalls = 1 + rng.IntN(8)
		case 3:
			c.PermittedInHalfOpen = 1 + rng.IntN(4)
		case 4:
			c.SlowCallThreshold = time.Duration(1+rng.IntN(3)) * time.Millisecond
		case 5:
			c.IgnoreOn = [][]error{nil, {errIgnored}, {errIgnored, errOther}}[rng.IntN(3)]
		case 6:
			c.RecordOn = [][]error{nil, {errBoom}}[rng.IntN(2)]
		case 7:
			c.Disabled = rng.IntN(4) == 0
		}
		require.NoError(t, b.Reconfigure(c))
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()

	final := defaultConfig(t)
	final.SlidingWindowSize, final.MinimumCalls, final.WaitInOpen = 4, 4, time.Hour
	require.NoError(t, b.Reconfigure(final))
	b.Reset()
	require.Equal(t, cb.Closed, b.State())
	for _, i := range []int{3, 0, 4, 0} { // ok, fail, ok, fail: 2 of 4 = 50%
		_, _ = call(context.Background(), i)
	}
	assert.Equal(t, cb.Open, b.State())
	assert.Equal(t, cb.Snapshot{State: cb.Open, FailureRate: 50, SlowCallRate: 0,
		BufferedCalls: 4, FailedCalls: 2}, b.Snapshot())
	assert.NotEmpty(t, rec.changed())
	assert.True(t, errors.Is(func() error { _, err := call(context.Background(), 3); return err }(), cb.ErrOpen))
}
