package contract_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// rankedKind is a descriptor of layer l with rank rank, and nothing else.
func rankedKind(l policy.Layer, rank int) *contract.Descriptor[testPolicySettings] {
	return &contract.Descriptor[testPolicySettings]{L: l, Defaults: func() testPolicySettings { return testPolicySettings{} },
		Compose: contract.Composition{Rank: rank}}
}

// Ranked lists the registered layers that have a rank, by rank, lowest first, two of
// equal rank by name; a layer without a rank has no place in it.
func TestRanked(t *testing.T) {
	for _, k := range []*contract.Descriptor[testPolicySettings]{
		rankedKind("testZ", -1_000_002), rankedKind("testB", -1_000_001), rankedKind("testA", -1_000_001),
		rankedKind("testNone", 0),
	} {
		defer contract.Register(k)()
	}
	got := contract.Ranked()
	require.GreaterOrEqual(t, len(got), 3)
	assert.Equal(t, []policy.Layer{"testZ", "testA", "testB"}, got[:3])
	assert.NotContains(t, got, policy.Layer("testNone"))
	assert.Equal(t, contract.Composition{Rank: -1_000_002}, contract.CompositionOf("testZ"))
	assert.Zero(t, contract.CompositionOf("testUnknown"), "a layer of no kind: the zero Composition")
}

type liveConfig struct{ N int }

func (c liveConfig) Validate() error {
	if c.N < 0 {
		return errors.New("negative")
	}
	return nil
}

// checked takes a liveConfig live, with CheckReconfigure.
type checked struct{ cfg liveConfig }

func (c *checked) InstanceID() string { return "checked" }
func (c *checked) CheckReconfigure(n liveConfig) error {
	if n.N > 10 {
		return errors.New("too big")
	}
	return nil
}
func (c *checked) Reconfigure(n liveConfig) error {
	if err := c.CheckReconfigure(n); err != nil {
		return err
	}
	c.cfg = n
	return nil
}

// unchecked takes a liveConfig live, without CheckReconfigure.
type unchecked struct{ cfg liveConfig }

func (u *unchecked) InstanceID() string { return "unchecked" }
func (u *unchecked) Reconfigure(n liveConfig) error {
	if err := n.Validate(); err != nil {
		return err
	}
	u.cfg = n
	return nil
}

// LiveAs changes an instance with CheckReconfigure, to a configuration given as itself or
// in a Shared; LiveValid also one without, checked by the configuration's Validate.
func TestLiveAsAndLiveValid(t *testing.T) {
	c := &checked{}
	for _, cfg := range []any{liveConfig{N: 3}, contract.Shared[liveConfig]{Config: liveConfig{N: 3}}} {
		ch, ok := contract.LiveAs[liveConfig](c, cfg)
		require.True(t, ok)
		require.NoError(t, ch.Check())
		require.NoError(t, ch.Apply())
		assert.Equal(t, 3, c.cfg.N)
	}
	ch, ok := contract.LiveAs[liveConfig](c, liveConfig{N: 11})
	require.True(t, ok)
	assert.EqualError(t, ch.Check(), "too big")
	assert.Equal(t, 3, c.cfg.N, "Check changes nothing")

	_, ok = contract.LiveAs[liveConfig](c, 7)
	assert.False(t, ok, "not a configuration of the type")
	u := &unchecked{}
	_, ok = contract.LiveAs[liveConfig](u, liveConfig{N: 1})
	assert.False(t, ok, "no CheckReconfigure")

	ch, ok = contract.LiveValid[liveConfig](u, liveConfig{N: -1})
	require.True(t, ok)
	assert.EqualError(t, ch.Check(), "negative")
	ch, ok = contract.LiveValid[liveConfig](u, liveConfig{N: 2})
	require.True(t, ok)
	require.NoError(t, ch.Check())
	require.NoError(t, ch.Apply())
	assert.Equal(t, 2, u.cfg.N)
	ch, ok = contract.LiveValid[liveConfig](c, liveConfig{N: 11})
	require.True(t, ok)
	assert.EqualError(t, ch.Check(), "too big", "with CheckReconfigure, LiveValid is LiveAs")
}

// Params lists the configuration attributes, their option functions the names in upper
// case unless given, then the attributes only code gives; Package is the settings type's.
func TestParams(t *testing.T) {
	d := &contract.Descriptor[testPolicySettings]{
		L: "testParams",
		Attrs: []contract.Attr[testPolicySettings]{
			contract.IntAttr("size", func(s *testPolicySettings) *int { return &s.Size }),
			{Name: "mode", Set: func(*testPolicySettings, string) error { return nil }, Option: "UseMode", Value: contract.EnumValue,
				Enum: []contract.Enum{{Spelling: "fast", Const: "Fast"}}},
			contract.EnabledAttr(func(s *testPolicySettings) *bool { return new(bool) }),
		},
		CodeAttrs: []contract.Param{{Name: "dropOn", Option: "DropOn", Value: contract.ErrorsValue, Config: true}},
	}
	assert.Equal(t, []contract.Param{
		{Name: "size", Option: "Size", Value: contract.IntValue, Config: true},
		{Name: "mode", Option: "UseMode", Value: contract.EnumValue, Enum: []contract.Enum{{Spelling: "fast", Const: "Fast"}}, Config: true},
		{Name: "enabled", Option: "Enabled", Value: contract.BoolValue, Config: true},
		{Name: "dropOn", Option: "DropOn", Value: contract.ErrorsValue},
	}, d.Params(), "a code attribute is never a configuration attribute")
	assert.Equal(t, "github.com/resilience4go/resilience4go/internal/contract_test", d.Package())
	assert.Equal(t, "Duration", contract.DurationAttr[testPolicySettings]("duration", nil).Param().Option)
	assert.Equal(t, contract.FloatValue, contract.FloatAttr[testPolicySettings]("f", nil).Param().Value)
	assert.Equal(t, contract.BoolValue, contract.BoolAttr[testPolicySettings]("b", nil).Param().Value)
}
