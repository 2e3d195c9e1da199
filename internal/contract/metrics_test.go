package contract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// validMetrics is a consistent declaration of the outcomes shape, with transitions.
func validMetrics() *contract.Metrics {
	return &contract.Metrics{
		Instruments: []contract.Instrument{
			{Name: "t.calls", Unit: "{call}", Kind: contract.Counter},
			{Name: "t.duration", Unit: "s", Kind: contract.Histogram},
			{Name: "t.moves", Unit: "{transition}", Kind: contract.Counter},
			{Name: "t.level", Unit: "1", Kind: contract.UpDown, Read: func(any, int) (float64, bool) { return 1, true }},
		},
		Outcomes: &contract.Outcomes{Calls: "t.calls", Attr: "outcome", Duration: "t.duration",
			Classes: []contract.Class{{Value: "succeeded", Result: observe.ResultSucceeded, Timed: true}}},
		Transitions: &contract.Transitions{Counter: "t.moves", States: []string{"a", "b"},
			Of: func(policy.Event) (int, int, bool) { return 0, 1, true }},
	}
}

// Check accepts a consistent declaration and nil, and names what is wrong with an
// inconsistent one.
func TestMetricsCheck(t *testing.T) {
	require.NoError(t, (*contract.Metrics)(nil).Check())
	require.NoError(t, validMetrics().Check())

	for name, c := range map[string]struct {
		change func(*contract.Metrics)
		want   string
	}{
		"unknown instrument": {func(m *contract.Metrics) { m.Outcomes.Calls = "t.nope" }, `"t.nope"`},
		"wrong kind":         {func(m *contract.Metrics) { m.Outcomes.Duration = "t.calls" }, `"t.calls"`},
		"histogram unit":     {func(m *contract.Metrics) { m.Instruments[1].Unit = "ms" }, "seconds"},
		"duplicate": {func(m *contract.Metrics) { m.Instruments = append(m.Instruments, m.Instruments[0]) },
			"declared twice"},
		"no unit":    {func(m *contract.Metrics) { m.Instruments[0].Unit = "" }, "a name, a unit and a kind"},
		"no classes": {func(m *contract.Metrics) { m.Outcomes.Classes = nil }, "classes"},
		"too many classes": {func(m *contract.Metrics) {
			m.Outcomes.Classes = make([]contract.Class, contract.MaxClasses+1)
		}, "classes"},
		"class without result": {func(m *contract.Metrics) { m.Outcomes.Classes[0].Result = 0 }, "a value and a result"},
		"two shapes": {func(m *contract.Metrics) { m.Admissions = &contract.Admissions{Calls: "t.calls"} },
			"one shape at most"},
		"transitions alone":      {func(m *contract.Metrics) { m.Outcomes = nil }, "only with outcomes"},
		"transitions without Of": {func(m *contract.Metrics) { m.Transitions.Of = nil }, "states and Of"},
	} {
		t.Run(name, func(t *testing.T) {
			m := validMetrics()
			c.change(m)
			err := m.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A descriptor's Measures is its Metrics.
func TestDescriptorMeasures(t *testing.T) {
	m := validMetrics()
	d := &contract.Descriptor[testPolicySettings]{L: "testMeasured", Metrics: m}
	assert.Same(t, m, d.Measures())
	assert.Nil(t, cacheDescriptor.Measures())
}
