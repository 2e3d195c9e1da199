// Package kindtest helps the tests of the policy packages: one check of what a descriptor
// says of itself and one of bad configuration values for every attribute table, one
// recorder of the events a policy publishes, an asynchronous function whose calls stay
// pending until the test completes them, the situations a call whose context is already
// over may find at a policy with a queue, a wait, without sleeping, for a condition
// another goroutine makes true, and for the recording of outcomes an observer that keeps
// what its recorders are given, marked contexts, no-op and nil observers, a clock that
// counts its reads, and the recording tests every queueing policy (bulkhead, adaptive
// limiter) runs.
package contracttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// BadValue is a configuration value that an attribute must refuse with Code.
type BadValue struct{ Attr, Value, Code string }

// RequireRefused checks that d's attribute table refuses each bad value on s: a
// *policy.ConfigError with the value's code, the key "<segment>.<attr>" and the code in its
// message; s unchanged; and d.Check agreeing with the table.
func RequireRefused[S any](t testing.TB, d *contract.Descriptor[S], s *S, bad []BadValue) {
	t.Helper()
	table := d.Table()
	for _, b := range bad {
		before := *s
		err := table.Set(s, b.Attr, b.Value)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%s = %q", b.Attr, b.Value)
		assert.Equal(t, b.Code, ce.Code, "%s = %q", b.Attr, b.Value)
		assert.Equal(t, string(d.L)+"."+b.Attr, ce.Key)
		assert.Contains(t, err.Error(), b.Code)
		assert.Equal(t, before, *s, "%s = %q: a bad value changes nothing", b.Attr, b.Value)
		assert.Equal(t, b.Code, r4c.CodeOf(d.Check(b.Attr, b.Value)), "%s = %q: Check agrees with Set", b.Attr, b.Value)
	}
}

// RequireDescriptor checks what a policy package's descriptor d says of itself: its layer,
// its configuration segment (the configuration's spelling of the layer, e.g.
// "circuitBreaker"), its attributes in order, its built-in defaults, and that it is the
// kind registered for its layer.
func RequireDescriptor[S any](t testing.TB, d *contract.Descriptor[S], layer policy.Layer, segment string, attrs []string, defaults S) {
	t.Helper()
	assert.Equal(t, layer, d.Layer())
	assert.Equal(t, segment, d.Table().Segment)
	assert.Equal(t, attrs, d.Attributes())
	assert.Equal(t, defaults, d.Defaults(), "the built-in defaults")
	k, ok := contract.Lookup(layer)
	require.True(t, ok, "registered")
	assert.Same(t, d, k)
}
