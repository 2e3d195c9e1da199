package chaos_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/chaos"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/resilience"
)

// newRegistry returns a registry on a manual clock, with props, whose events ev keeps.
func newRegistry(t *testing.T, props map[string]string) (*resilience.Registry, *clock.Manual, *events) {
	t.Helper()
	clk := clock.NewManual()
	ev := &events{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clk), resilience.WithProperties(props),
		resilience.WithEventListener(ev.listen))
	require.NoError(t, err)
	return reg, clk, ev
}

// countFaults makes n calls and returns how many failed with err.
func countFaults(t *testing.T, call func(context.Context) (int, error), n int, err error) int {
	t.Helper()
	faults := 0
	for range n {
		if _, e := call(context.Background()); e != nil {
			require.ErrorIs(t, e, err)
			faults++
		}
	}
	return faults
}

// SPEC CH-4, CH-10: in a composition the chaos layer is off until configured; a
// registry's Reload switches it on and off, and changes its rate, while it runs.
func TestCH10_ReloadSwitchesOnAndOff(t *testing.T) {
	reg, _, ev := newRegistry(t, map[string]string{"defaults.chaos.rate": "1"})
	fn := func(context.Context) (int, error) { return 1, nil }
	call, err := resilience.Wrap(reg, "Inventory.Get", fn, resilience.Chaos())
	require.NoError(t, err)
	assert.Zero(t, countFaults(t, call, 1000, chaos.ErrInjected), "off: never on unless configured")

	require.NoError(t, reg.Reload(map[string]string{"defaults.chaos.rate": "1", "instances.Inventory.Get.chaos.enabled": "true"}))
	assert.Equal(t, 1000, countFaults(t, call, 1000, chaos.ErrInjected), "on")
	c, err := resilience.Lookup[*chaos.Chaos](reg, chaos.Layer, "Inventory.Get")
	require.NoError(t, err)
	assert.Equal(t, uint64(1000), c.Snapshot().Errors)
	var changed []policy.Event
	for _, e := range ev.list {
		if e.Kind == policy.ConfigChanged {
			changed = append(changed, e)
		}
	}
	require.Len(t, changed, 1)
	assert.Equal(t, []string{"enabled"}, changed[0].Changed)

	require.NoError(t, reg.Reload(map[string]string{"defaults.chaos.rate": "0.1", "defaults.chaos.enabled": "true"}))
	n := countFaults(t, call, 10_000, chaos.ErrInjected)
	lo, hi := binomialBounds(10_000, 0.1, 5)
	assert.True(t, n >= lo && n <= hi, "rate 0.1 after the reload: %d injected", n)

	require.NoError(t, reg.Reload(map[string]string{"defaults.chaos.rate": "1"}))
	assert.Zero(t, countFaults(t, call, 1000, chaos.ErrInjected), "off again: the key is gone")

	err = reg.Reload(map[string]string{"defaults.chaos.rate": "1.5"})
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	assert.Equal(t, 1.0, c.Config().Rate, "a refused reload changes nothing")
}

// SPEC CH-11: the chaos layer is innermost: a retry outside it retries an injected fault,
// each attempt drawing again, and an injected latency is the function's own.
func TestCH11_InnermostInTheDefaultOrder(t *testing.T) {
	reg, clk, _ := newRegistry(t, nil)
	runs := 0
	call, err := resilience.Wrap(reg, "Inventory.Get", func(context.Context) (int, error) { runs++; return 1, nil },
		resilience.Chaos(chaos.Enabled(true), chaos.Rate(1), chaos.Latency(100*time.Millisecond), chaos.Error(errUnavailable)),
		resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Second)))
	require.NoError(t, err)
	_, err = call(context.Background())
	assert.Same(t, errUnavailable, err)
	assert.Zero(t, runs)
	c, err := resilience.Lookup[*chaos.Chaos](reg, chaos.Layer, "Inventory.Get")
	require.NoError(t, err)
	assert.Equal(t, uint64(3), c.Snapshot().Errors, "one per attempt")
	assert.Equal(t, 3*100*time.Millisecond+2*time.Second, clk.Now(), "three latencies, two retry delays")
	order := contract.Ranked()
	assert.Equal(t, chaos.Layer, order[len(order)-1], "innermost")
}

// SPEC CH-9: a registry refuses a Result of another type than the function's with
// R4C-REG-010 when it wraps the function; functions that share a chaos instance by name
// must inject the same error.
func TestCH9_RegistryChecksResultAndSharing(t *testing.T) {
	reg, _, _ := newRegistry(t, nil)
	_, err := resilience.Wrap(reg, "Inventory.Get", func(context.Context) (string, error) { return "", nil },
		resilience.Chaos(chaos.Result(func(context.Context) (int, error) { return 1, nil })))
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err))

	stale := chaos.Result(func(context.Context) (string, error) { return "stale", nil })
	call, err := resilience.Wrap(reg, "Inventory.Get", func(context.Context) (string, error) { return "", nil },
		resilience.Chaos(stale, chaos.Enabled(true), chaos.Rate(1)))
	require.NoError(t, err)
	got, err := call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "stale", got)

	fn := func(context.Context) (int, error) { return 1, nil }
	_, err = resilience.Wrap(reg, "A.Get", fn, resilience.Chaos(chaos.Name("shared"), chaos.Error(errUnavailable)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "B.Get", fn, resilience.Chaos(chaos.Name("shared"), chaos.Error(errUnavailable)))
	require.NoError(t, err, "the same error: one instance")
	_, err = resilience.Wrap(reg, "C.Get", fn, resilience.Chaos(chaos.Name("shared"), chaos.Error(errors.New("inventory unavailable"))))
	assert.Equal(t, r4c.Conflict, r4c.CodeOf(err), "another error of the same text is another configuration")
	_, err = resilience.Wrap(reg, "D.Get", fn, resilience.Chaos(chaos.Name("shared"), chaos.Error(errUnavailable), chaos.Seed(1)))
	assert.Equal(t, r4c.Conflict, r4c.CodeOf(err), "a seed too")
}
