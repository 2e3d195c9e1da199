package throttle_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/throttle"
	"github.com/resilience4go/resilience4go/resilience"
)

// SPEC TH-8: a reload changes K and MaxRejection from the next call, and the window at once, with an
// empty one; an invalid configuration changes nothing; an equal one publishes nothing.
func TestReconfigure(t *testing.T) {
	f := newFixture(t, throttle.Window(10*time.Second))
	f.calls(10, errRefused, 1)
	f.calls(2, nil, 1) // 12 requests, 2 accepts
	require.InDelta(t, 8.0/13, f.t.Snapshot().Probability, 1e-12)

	c := f.t.Config()
	c.K = 6
	require.NoError(t, f.t.Reconfigure(c))
	assert.Zero(t, f.t.Snapshot().Probability, "12 ≤ 6·2")
	c.MaxRejection = 0.1
	c.K = 1
	require.NoError(t, f.t.Reconfigure(c))
	assert.Equal(t, 0.1, f.t.Snapshot().Probability)
	assert.Equal(t, 12, f.t.Snapshot().Requests, "the window is kept")

	bad := c
	bad.K = 0
	require.Equal(t, r4c.OutOfRange, r4c.CodeOf(f.t.CheckReconfigure(bad)))
	require.Equal(t, r4c.OutOfRange, r4c.CodeOf(f.t.Reconfigure(bad)))
	assert.Equal(t, c, f.t.Config(), "nothing changed")

	c.Window = time.Minute
	require.NoError(t, f.t.Reconfigure(c))
	assert.Equal(t, throttle.Snapshot{Instance: "backend"}, f.t.Snapshot(), "a new, empty window")

	c.Disabled = true
	require.NoError(t, f.t.Reconfigure(c))
	f.calls(5, errRefused, 0)
	assert.Equal(t, throttle.Snapshot{Instance: "backend"}, f.t.Snapshot(), "disabled: nothing counted")
	require.NoError(t, f.t.Reconfigure(c), "equal: nothing published")

	var changed [][]string
	for _, e := range f.rec.Of(policy.ConfigChanged) {
		changed = append(changed, e.Changed)
	}
	assert.Equal(t, [][]string{{"k"}, {"k", "maxRejection"}, {"window"}, {"enabled"}}, changed)
}

// SPEC TH-5, TH-8, TH-9: in a registry, the configuration keys set the throttle, a reload changes it live, and
// the composition puts it inside the retry and outside the circuit breaker; the retry does not retry a
// throttled call.
func TestRegistry(t *testing.T) {
	clk := clock.NewManual()
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithProperties(map[string]string{
		"instances.Backend.Get.throttle.k":      "1.5",
		"instances.Backend.Get.throttle.window": "30s",
	}))
	require.NoError(t, err)
	var fail bool
	calls := 0
	get, err := resilience.Wrap(reg, "Backend.Get", func(context.Context) (int, error) {
		calls++
		if fail {
			return 0, errRefused
		}
		return 1, nil
	}, resilience.Throttle(throttle.RandomSource(&fixedSource{})), resilience.Retry())
	require.NoError(t, err)
	th, err := resilience.Lookup[*throttle.Throttle](reg, throttle.Layer, "Backend.Get")
	require.NoError(t, err)
	assert.Equal(t, throttle.Config{K: 1.5, Window: 30 * time.Second, MaxRejection: 0.9}, th.Config())

	_, err = get(context.Background())
	require.NoError(t, err)
	fail = true
	done := make(chan error)
	go func() { _, err := get(context.Background()); done <- err }()
	// The retry's attempts are each a request: the first attempt is refused by the
	// backend; after the retry's 500ms the second is throttled (2 requests, 1 accept:
	// p = 1/6 with K = 1.5, and the source draws 0), and the retry does not retry a
	// throttled call: the call ends with the rejection, the backend called once.
	for err == nil {
		select {
		case err = <-done:
		default:
			if clk.PendingTasks() > 0 { // the retry sleeps: move its time on
				clk.Advance(100 * time.Millisecond)
			} else {
				runtime.Gosched()
			}
		}
	}
	assert.ErrorIs(t, err, throttle.ErrThrottled)
	var never policy.NeverRetried
	require.ErrorAs(t, err, &never)
	assert.True(t, never.NeverRetried())
	assert.Equal(t, 500*time.Millisecond, clk.Now(), "no wait after the rejection")
	assert.Equal(t, 2, calls, "the first call, and the refused attempt")
	assert.Equal(t, throttle.Snapshot{Instance: "Backend.Get", Requests: 3, Accepts: 1, Probability: 0.375}, th.Snapshot())

	require.NoError(t, reg.Reload(map[string]string{"instances.Backend.Get.throttle.k": "4"}))
	assert.Equal(t, 4.0, th.Config().K)
	assert.Equal(t, time.Minute, th.Config().Window, "the reload's keys replace the old ones")
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(reg.Reload(map[string]string{"defaults.throttle.maxRejection": "2"})))
}
