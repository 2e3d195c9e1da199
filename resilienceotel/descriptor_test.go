package resilienceotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// quotaSettings are the settings of a policy kind this package does not know.
type quotaSettings struct{ contract.Common }

// OB-2: the instruments, recorder and gauges of a policy kind come from its descriptor
// alone: a kind registered by a package the exporter never names is measured like the
// built-in ones, and a whole call's rejection by it is counted under its layer.
func TestOB2_KindDeclaresItsMetrics(t *testing.T) {
	const layer = policy.Layer("quota")
	unregister := contract.Register(&contract.Descriptor[quotaSettings]{
		L: layer,
		Metrics: &contract.Metrics{
			Instruments: []contract.Instrument{
				{Name: "test.quota.calls", Unit: "{call}", Kind: contract.Counter, Description: "Quota decisions."},
				{Name: "test.quota.wait.duration", Unit: "s", Kind: contract.Histogram, Description: "Quota waits."},
				{Name: "test.quota.left", Unit: "{call}", Kind: contract.UpDown, Description: "Calls left.",
					Read: func(state any, _ int) (float64, bool) { return float64(state.(int)), true }},
			},
			Admissions: &contract.Admissions{Calls: "test.quota.calls", Wait: "test.quota.wait.duration"},
		},
	})
	defer unregister()
	h := newHarness(t)

	ctx := context.Background()
	r := h.m.Instrument(layer, "Q")
	require.NotNil(t, r)
	r.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: 20 * time.Millisecond})
	r.Record(ctx, observe.Outcome{Result: observe.ResultRejected})
	r.Record(ctx, observe.Outcome{Result: observe.ResultRejected})
	h.m.Instrument(observe.LayerCall, "Q").Record(ctx, observe.Outcome{Result: observe.ResultRejected, RejectedBy: layer})

	c := h.collect()
	assert.Equal(t, map[string]int64{
		"{name=Q,outcome=admitted}": 1,
		"{name=Q,outcome=rejected}": 2,
	}, c.intPoints("test.quota.calls"))
	n, sum := c.hist("test.quota.wait.duration", "name=Q")
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 0.02, sum, 1e-9)
	assert.Equal(t, int64(1), c.int(resilienceotel.Calls, "name=Q", "outcome=rejected", "layer=quota"))
	assert.False(t, c.has("test.quota.left"), "read from a registry's snapshots only")
}

// New refuses a kind whose metrics are inconsistent, or that declares an instrument
// another kind declares.
func TestOB2_NewRefusesBadDeclarations(t *testing.T) {
	unregister := contract.Register(&contract.Descriptor[quotaSettings]{
		L: "quotaBad",
		Metrics: &contract.Metrics{
			Instruments: []contract.Instrument{{Name: RetryCalls, Unit: "{call}", Kind: contract.Counter}},
			Admissions:  &contract.Admissions{Calls: "test.nope"},
		},
	})
	_, err := resilienceotel.New(nil)
	unregister()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test.nope")

	unregister = contract.Register(&contract.Descriptor[quotaSettings]{
		L: "quotaDup",
		Metrics: &contract.Metrics{
			Instruments: []contract.Instrument{{Name: RetryCalls, Unit: "{call}", Kind: contract.Counter}},
			Admissions:  &contract.Admissions{Calls: RetryCalls},
		},
	})
	defer unregister()
	_, err = resilienceotel.New(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "both declare instrument "+RetryCalls)
}

// OB-2: New refuses a kind that declares an attribute named as the one every series has
// (name, the instance's id), or as one of Prometheus' target labels (instance, job),
// which a default scrape would rename.
func TestOB2_NewRefusesReservedAttributeKeys(t *testing.T) {
	for _, key := range []string{"name", "instance", "job"} {
		unregister := contract.Register(&contract.Descriptor[quotaSettings]{
			L: policy.Layer("quotaKey" + key),
			Metrics: &contract.Metrics{
				Instruments: []contract.Instrument{
					{Name: "test.quota.calls." + key, Unit: "{call}", Kind: contract.Counter},
					{Name: "test.quota.state." + key, Unit: "1", Kind: contract.UpDown, Key: "state", Values: []string{"a"},
						Read: func(any, int) (float64, bool) { return 1, true }},
				},
				Outcomes: &contract.Outcomes{Calls: "test.quota.calls." + key, Attr: key,
					Classes: []contract.Class{{Value: "ok", Result: observe.ResultSucceeded}}},
			},
		})
		_, err := resilienceotel.New(nil)
		unregister()
		require.Error(t, err, key)
		assert.Contains(t, err.Error(), "attribute "+key, key)
	}
	unregister := contract.Register(&contract.Descriptor[quotaSettings]{
		L: "quotaGaugeKey",
		Metrics: &contract.Metrics{
			Instruments: []contract.Instrument{
				{Name: "test.quota.state", Unit: "1", Kind: contract.UpDown, Key: "instance", Values: []string{"a"},
					Read: func(any, int) (float64, bool) { return 1, true }},
			},
		},
	})
	defer unregister()
	_, err := resilienceotel.New(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "attribute instance")
}
