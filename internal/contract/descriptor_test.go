package contract_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

type cacheInstance struct{ id string }

func (c *cacheInstance) InstanceID() string { return c.id }

var cacheDescriptor = &contract.Descriptor[testPolicySettings]{
	L: policy.Layer("testCache"),
	Attrs: []contract.Attr[testPolicySettings]{
		contract.IntAttr("size", func(s *testPolicySettings) *int { return &s.Size }),
	},
	Defaults: func() testPolicySettings { return testPolicySettings{Size: 10} },
	Common:   func(s *testPolicySettings) *contract.Common { return &s.Common },
	Config:   func(s *testPolicySettings) any { return s.Size },
	Build: func(s testPolicySettings) (contract.Instance, error) {
		return &cacheInstance{id: s.ID("cache")}, nil
	},
	Of: func(contract.Instance) any { return 10 },
}

func TestDescriptor(t *testing.T) {
	assert.Equal(t, policy.Layer("testCache"), cacheDescriptor.Layer())
	assert.Equal(t, "testCache", cacheDescriptor.Table().Segment)
	assert.Equal(t, []string{"size"}, cacheDescriptor.Attributes())
	require.NoError(t, cacheDescriptor.Check("size", "5"))
	assert.Equal(t, r4c.BadNumber, r4c.CodeOf(cacheDescriptor.Check("size", "big")))
	assert.Equal(t, r4c.UnknownKey, r4c.CodeOf(cacheDescriptor.Check("ttl", "1s")))
	assert.Nil(t, cacheDescriptor.Snapshot(&cacheInstance{}), "no State: no snapshot")
	assert.Equal(t, 10, cacheDescriptor.Of(&cacheInstance{}))

	unregister := contract.Register(cacheDescriptor)
	k, ok := contract.Lookup("testCache")
	require.True(t, ok)
	assert.Same(t, cacheDescriptor, k)
	assert.Contains(t, contract.All(), contract.Kind(cacheDescriptor))
	assert.Panics(t, func() { contract.Register(cacheDescriptor) }, "a layer registered twice")
	unregister()
	_, ok = contract.Lookup("testCache")
	assert.False(t, ok, "unregistered")
}

// An instance's id is the descriptor's ID, else the instance's InstanceID method; IDOf
// asks the registered kind of a layer, or the instance's method when the layer is not
// registered.
func TestDescriptor_IDOf(t *testing.T) {
	id, ok := cacheDescriptor.IDOf(&cacheInstance{id: "c"})
	assert.True(t, ok)
	assert.Equal(t, "c", id, "no ID: the InstanceID method")
	_, ok = cacheDescriptor.IDOf(struct{}{})
	assert.False(t, ok, "no ID and no method")

	byID := *cacheDescriptor
	byID.L = "testCacheByID"
	byID.ID = func(p contract.Instance) string { return "id of " + p.(*cacheInstance).id }
	id, ok = byID.IDOf(&cacheInstance{id: "c"})
	assert.True(t, ok)
	assert.Equal(t, "id of c", id, "the descriptor's ID comes first")

	unregister := contract.Register(&byID)
	defer unregister()
	id, ok = contract.IDOf("testCacheByID", &cacheInstance{id: "c"})
	assert.True(t, ok)
	assert.Equal(t, "id of c", id)
	id, ok = contract.IDOf("unregistered", &cacheInstance{id: "c"})
	assert.True(t, ok)
	assert.Equal(t, "c", id, "an unregistered layer: the instance's method")
	_, ok = contract.IDOf("unregistered", struct{}{})
	assert.False(t, ok)
}

func TestNew(t *testing.T) {
	build := func(s testPolicySettings) (*cacheInstance, error) {
		if s.Size < 1 {
			return nil, errors.New("too small")
		}
		return &cacheInstance{id: s.ID("cache")}, nil
	}
	defaults := func() testPolicySettings { return testPolicySettings{Size: 10} }
	size := func(n int) func(*testPolicySettings) { return func(s *testPolicySettings) { s.Size = n } }

	c, err := contract.New(defaults, build, []func(*testPolicySettings){nil, contract.Name[testPolicySettings]("n")})
	require.NoError(t, err)
	assert.Equal(t, "n", c.InstanceID())
	_, err = contract.New(defaults, build, []func(*testPolicySettings){size(0)})
	assert.EqualError(t, err, "too small", "options apply over the defaults, in order, before build")
	_, err = contract.New(defaults, build, []func(*testPolicySettings){size(0), size(1)})
	assert.NoError(t, err)
}

type rangeSettings struct {
	Size, Ways int
	contract.Common
}

// CheckRange reports a range error about an attribute of the values given, and leaves to
// the other sources of a configuration an error about an attribute they did not give.
func TestDescriptor_CheckRange(t *testing.T) {
	d := &contract.Descriptor[rangeSettings]{
		L: policy.Layer("testRange"),
		Attrs: []contract.Attr[rangeSettings]{
			contract.IntAttr("size", func(s *rangeSettings) *int { return &s.Size }),
			contract.IntAttr("ways", func(s *rangeSettings) *int { return &s.Ways }),
		},
		Defaults: func() rangeSettings { return rangeSettings{Size: 10} }, // no ways: required
		Common:   func(s *rangeSettings) *contract.Common { return &s.Common },
		Build: func(s rangeSettings) (contract.Instance, error) {
			switch {
			case s.Ways < 1:
				return nil, r4c.Errorf(r4c.OutOfRange, "testRange.ways", "", "ways is not set")
			case s.Size < 1:
				return nil, r4c.Errorf(r4c.OutOfRange, "testRange.size", "", "size must be at least 1")
			}
			return &cacheInstance{}, nil
		},
	}
	attr, err := d.CheckRange(map[string]string{"ways": "2", "size": "0"})
	assert.Equal(t, "size", attr)
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	attr, err = d.CheckRange(map[string]string{"ways": "0"})
	assert.Equal(t, "ways", attr)
	assert.Error(t, err)

	attr, err = d.CheckRange(map[string]string{"size": "0"})
	assert.NoError(t, err, "the first error is about ways, which other sources may set")
	assert.Empty(t, attr)
	_, err = d.CheckRange(map[string]string{"ways": "4", "size": "3"})
	assert.NoError(t, err)

	// With Validate, nothing is built.
	build := d.Build
	d.Build = func(rangeSettings) (contract.Instance, error) { panic("built") }
	d.Validate = func(s *rangeSettings) error { _, err := build(*s); return err }
	attr, err = d.CheckRange(map[string]string{"ways": "2", "size": "0"})
	assert.Equal(t, "size", attr)
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))

	d.Build, d.Validate = nil, nil
	_, err = d.CheckRange(map[string]string{"size": "0"})
	assert.NoError(t, err, "nothing to check for a kind the registry builds")
}
