package typed

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/resilience"
)

// fake implements every interface of the package.
type fake struct{ calls []string }

func (f *fake) Get(_ context.Context, id int) (string, error) {
	f.calls = append(f.calls, "Get")
	return "got", nil
}

func (f *fake) get(_ context.Context, id int, at time.Time, tags []string) (string, error) {
	f.calls = append(f.calls, "get")
	return at.Format(time.DateOnly) + " " + tags[0], nil
}

func (f *fake) Put(context.Context, string) error {
	f.calls = append(f.calls, "Put")
	return nil
}

func (f *fake) Count() int {
	f.calls = append(f.calls, "Count")
	return 7
}

// SPEC GN-4: an unexported interface has an unexported wrapper and constructor, and its
// unexported method is guarded, with the instance id "beta.get"; an interface that -type
// names without directives gets a wrapper that calls the implementation directly.
func TestTyped(t *testing.T) {
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	impl := &fake{}
	b, err := newBetaResilient(impl, reg)
	require.NoError(t, err)
	got, err := b.get(context.Background(), 1, time.Date(2024, 5, 6, 0, 0, 0, 0, time.UTC), []string{"tag"})
	require.NoError(t, err)
	assert.Equal(t, "2024-05-06 tag", got)
	require.NoError(t, b.Put(context.Background(), "v"))
	for _, id := range []string{"beta.get", "beta.Put"} {
		to, err := resilience.Lookup[*timeout.Timeout](reg, timeout.Layer, id)
		require.NoError(t, err, id)
		assert.Equal(t, 100*time.Millisecond, to.Config().Duration, id)
	}

	p, err := NewPlainResilient(impl, reg)
	require.NoError(t, err)
	got, err = p.Get(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "got", got)
	assert.Equal(t, 7, p.Count())
	assert.Equal(t, []string{"get", "Put", "Get", "Count"}, impl.calls)
	_, err = resilience.Lookup[*timeout.Timeout](reg, timeout.Layer, "Plain.Get")
	assert.Error(t, err, "Plain's methods have no policies")

	a, err := NewAlphaResilient(impl, reg)
	require.NoError(t, err)
	_, err = a.Get(context.Background(), 1)
	require.NoError(t, err)
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "Alpha.Get")
	require.NoError(t, err)
	assert.Equal(t, 2, bh.Snapshot().MaxConcurrent)
}
