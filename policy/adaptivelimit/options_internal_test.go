package adaptivelimit

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

func TestDescriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "adaptiveLimit", []string{"algorithm", "initialLimit", "minLimit", "maxLimit", "maxWait", "backoffRatio",
		"latencyThreshold", "tolerance", "smoothing", "baselineWindow", "priorityReserve", "enabled", "shadow"},
		settings{Config: defaultConfig()})

	l, err := New(MaxLimit(50))
	require.NoError(t, err)
	assert.Equal(t, l.Config(), descriptor.Of(l))
	assert.Equal(t, l.Snapshot(), descriptor.Snapshot(l))
}

// SPEC AL-3: the attributes, set from strings; the algorithm is a choice, in any case.
func TestSetAttributes(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	for _, kv := range [][2]string{
		{"algorithm", " AIMD "}, {"initialLimit", "8"}, {"minLimit", "2"}, {"maxLimit", "64"}, {"maxWait", "250ms"},
		{"backoffRatio", "0.75"}, {"latencyThreshold", "80ms"}, {"tolerance", "2"}, {"smoothing", "0.5"},
		{"baselineWindow", "20"}, {"priorityReserve", "0.25"}, {"enabled", "false"},
	} {
		require.NoError(t, table.Set(&s, kv[0], kv[1]), "%s = %q", kv[0], kv[1])
	}
	assert.Equal(t, Config{Algorithm: AIMD, InitialLimit: 8, MinLimit: 2, MaxLimit: 64, MaxWait: 250 * time.Millisecond,
		BackoffRatio: 0.75, LatencyThreshold: 80 * time.Millisecond, Tolerance: 2, Smoothing: 0.5, BaselineWindow: 20, PriorityReserve: 0.25,
		Disabled: true}, s.Config)
	for _, v := range []string{"gradient2", "Vegas", "aimd"} {
		require.NoError(t, table.Set(&s, "algorithm", v))
		assert.Equal(t, strings.ToLower(v), s.Algorithm)
	}

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "algorithm", Value: "cubic", Code: r4c.OutOfRange},
		{Attr: "algorithm", Value: "", Code: r4c.OutOfRange},
		{Attr: "initialLimit", Value: "twenty", Code: r4c.BadNumber},
		{Attr: "minLimit", Value: "1.5", Code: r4c.BadNumber},
		{Attr: "maxLimit", Value: "", Code: r4c.BadNumber},
		{Attr: "maxWait", Value: "10 parsecs", Code: r4c.BadDuration},
		{Attr: "backoffRatio", Value: "half", Code: r4c.BadNumber},
		{Attr: "latencyThreshold", Value: "5", Code: r4c.BadDuration},
		{Attr: "tolerance", Value: "NaN", Code: r4c.BadNumber},
		{Attr: "smoothing", Value: "+Inf", Code: r4c.BadNumber},
		{Attr: "baselineWindow", Value: "many", Code: r4c.BadNumber},
		{Attr: "enabled", Value: "yes", Code: r4c.BadBoolean},
		{Attr: "limit", Value: "1", Code: r4c.UnknownKey},
	})
	err := table.Set(&s, "algorithm", "cubic")
	assert.EqualError(t, err, `R4C-ATR-007: adaptiveLimit.algorithm = "cubic": not an algorithm: use "aimd", "gradient2" or "vegas"`)

	// Ranges are checked by Validate (and CheckRange), whichever way the value came.
	for attr, v := range map[string]string{"initialLimit": "0", "minLimit": "0", "maxLimit": "1000001",
		"backoffRatio": "1", "latencyThreshold": "0", "tolerance": "0.5", "smoothing": "0", "baselineWindow": "0"} {
		s := defaults()
		require.NoError(t, table.Set(&s, attr, v))
		assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(s.Config.validate()), attr)
		_, err := build(s)
		assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err), attr)
		got, err := descriptor.CheckRange(map[string]string{attr: v})
		assert.Equal(t, attr, got)
		assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err), attr)
	}
	for _, attr := range []string{"maxWait", "latencyThreshold"} {
		s := defaults()
		require.NoError(t, table.Set(&s, attr, "-1s"))
		assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(s.Config.validate()), attr)
	}
}

// Options in code and configuration keys land on the same Config (SPEC RG-4).
func TestOptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	contract.Apply(&s, []Option{UseAlgorithm(Gradient2), InitialLimit(10), MinLimit(2), MaxLimit(40), MaxWait(time.Second),
		BackoffRatio(0.8), LatencyThreshold(time.Second), Tolerance(2), Smoothing(0.4), BaselineWindow(30), Enabled(false), nil})
	k := defaults()
	table := descriptor.Table()
	for _, kv := range [][2]string{
		{"algorithm", "gradient2"}, {"initialLimit", "10"}, {"minLimit", "2"}, {"maxLimit", "40"}, {"maxWait", "1s"},
		{"backoffRatio", "0.8"}, {"latencyThreshold", "1s"}, {"tolerance", "2"}, {"smoothing", "0.4"},
		{"baselineWindow", "30"}, {"enabled", "false"},
	} {
		require.NoError(t, table.Set(&k, kv[0], kv[1]))
	}
	assert.True(t, reflect.DeepEqual(s.Config, k.Config))

	l, err := New(UseAlgorithm(Gradient2), InitialLimit(10), MinLimit(2), MaxLimit(40), MaxWait(time.Second),
		BackoffRatio(0.8), LatencyThreshold(time.Second), Tolerance(2), Smoothing(0.4), BaselineWindow(30), Enabled(false))
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(k.Config, l.Config()), "New builds what the options set")
}
