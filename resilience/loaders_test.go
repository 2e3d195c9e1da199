package resilience_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// continuedProperties is one key whose value continues over n more lines: "a.b.c = x\",
// then n lines "yy\", then "z".
func continuedProperties(n int) string {
	return "a.b.c = x\\\n" + strings.Repeat("yy\\\n", n) + "z\n"
}

// requireShortMessage checks that err's message does not repeat a long input whole: it
// is short, and says how long the input was.
func requireShortMessage(t *testing.T, err error, inputLen int) {
	t.Helper()
	msg := err.Error()
	assert.Less(t, len(msg), 1000, "the message is short: %s", msg)
	assert.Contains(t, msg, "…")
	assert.Contains(t, msg, fmt.Sprintf("(%d bytes)", inputLen))
}

// 300,000 continuation lines are joined in linear time; the test's timeout is the bound
// (fault: each line was appended by copying the whole line so far).
func TestLoadProperties_ManyContinuationLines(t *testing.T) {
	const n = 300_000
	src := continuedProperties(n)
	require.Greater(t, len(src), 878_000)
	props, err := resilience.LoadProperties(strings.NewReader(src))
	require.NoError(t, err)
	v := props["a.b.c"]
	assert.Len(t, v, 1+2*n+1)
	assert.True(t, strings.HasPrefix(v, "xyyyy") && strings.HasSuffix(v, "yyz"))
}

// Lines made of backslashes only: each line's own trailing run decides whether it
// continues, so the run is never counted again across lines (fault: the run of the
// joined line was rescanned on every line).
func TestLoadProperties_BackslashOnlyContinuations(t *testing.T) {
	const n = 100_000
	props, err := resilience.LoadProperties(strings.NewReader("k = \\\\\\\n" + strings.Repeat("\\\\\\\n", n) + "end\n"))
	require.NoError(t, err)
	v := props["k"]
	assert.Len(t, v, 2*(n+1)+len("end"), "each line keeps two of its three backslashes")
	assert.True(t, strings.HasSuffix(v, `\\end`))
	assert.Equal(t, map[string]string{"k": `a\\b`}, mustProperties(t, "k = a\\\\\\\nb\n"))
}

func mustProperties(t *testing.T, src string) map[string]string {
	t.Helper()
	props, err := resilience.LoadProperties(strings.NewReader(src))
	require.NoError(t, err)
	return props
}

// An unknown key of 8 KB, 20 KB or 100 KB gets no suggestion and a message that does not
// repeat it whole; the test's timeout is the bound (fault: the did-you-mean computed an
// edit distance quadratic in the key's length, and the message echoed the key).
func TestNewRegistry_LongUnknownKeyIsQuick(t *testing.T) {
	for _, n := range []int{8 << 10, 20 << 10, 100 << 10} {
		key := "instances." + strings.Repeat("x", n) + ".rateLimiter.permitz"
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		ce := requireCode(t, err, r4c.UnknownKey)
		assert.Equal(t, key, ce.Key, "the field keeps the key whole")
		assert.NotContains(t, ce.Reason, "did you mean")
		requireShortMessage(t, err, len(key))
		assert.True(t, strings.HasPrefix(err.Error(), "R4C-CFG-001: instances.xxx"))
		assert.Contains(t, err.Error(), "x.rateLimiter.permitz (")
	}
}

// A key just under the bound still gets its suggestion.
func TestNewRegistry_SuggestionForKeysUpToTheBound(t *testing.T) {
	id := strings.Repeat("i", 200)
	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{"instances." + id + ".rateLimiter.permit": "1"}))
	ce := requireCode(t, err, r4c.UnknownKey)
	assert.Contains(t, ce.Reason, "did you mean instances."+id+".rateLimiter.permits?")
}

// A 100 KB variable name is refused at once, with a short message (fault: its
// did-you-mean ran for minutes).
func TestFromEnviron_LongNameIsQuick(t *testing.T) {
	for _, n := range []int{8 << 10, 100 << 10} {
		name := "R4C_INSTANCES_" + strings.Repeat("x", n) + "_RATELIMITER_PERMITZ"
		_, err := resilience.FromEnviron([]string{name + "=1"})
		ce := requireCode(t, err, r4c.BadSource)
		assert.Equal(t, name, ce.Key)
		requireShortMessage(t, err, len(name))
	}
	// Up to the bound, a variable that fits is read.
	id := strings.Repeat("x", resilience.MaxKeyLen-len("INSTANCES__RATELIMITER_PERMITS"))
	props, err := resilience.FromEnviron([]string{"R4C_INSTANCES_" + id + "_RATELIMITER_PERMITS=3"})
	require.NoError(t, err)
	assert.Equal(t, "3", props["instances."+id+".rateLimiter.permits"])
}

// Keys longer than MaxKeyLen are refused by the properties and YAML loaders, which keeps
// the flattening of YAML in proportion to its size (fault: a long prefix was copied
// into every key under it).
func TestLoaders_KeyLengthBound(t *testing.T) {
	long := strings.Repeat("k", resilience.MaxKeyLen+1)
	_, err := resilience.LoadProperties(strings.NewReader("a=1\n" + long + " = 1\n"))
	ce := requireCode(t, err, r4c.BadSource)
	assert.Contains(t, ce.Reason, "line 2")
	requireShortMessage(t, err, len(long))
	props, err := resilience.LoadProperties(strings.NewReader(long[1:] + " = 1\n"))
	require.NoError(t, err)
	assert.Len(t, props, 1, "MaxKeyLen bytes are allowed")

	// 40 levels of 30 bytes: the key grows past the bound on line 35.
	var doc strings.Builder
	for i := range 40 {
		doc.WriteString(strings.Repeat(" ", i) + strings.Repeat("p", 30) + ":\n")
	}
	doc.WriteString(strings.Repeat(" ", 40) + "leaf: 1\n")
	_, err = resilience.LoadYAML(strings.NewReader(doc.String()))
	ce = requireCode(t, err, r4c.BadSource)
	assert.Contains(t, ce.Reason, "YAML line 34:")
	assert.Contains(t, ce.Reason, "longer than 1024 bytes")
	assert.Greater(t, len(ce.Key), resilience.MaxKeyLen)
}

// A physical line of up to 1 MiB, without its terminator, is read whatever ends it; a
// longer one is refused with R4C-CFG-002 and its own line number, also when it continues
// another (fault: a line of exactly 1 MiB was refused, and after a continuation the error
// named the wrong line, or the line's first 1 MiB was read as a line of its own).
func TestLoadProperties_LinesUpTo1MiB(t *testing.T) {
	const mib = 1 << 20
	value := func(n int) string { return strings.Repeat("y", n) }
	for _, end := range []string{"\n", "\r\n", "\r", ""} {
		line := "a=" + value(mib-2)
		props, err := resilience.LoadProperties(strings.NewReader(line + end))
		require.NoError(t, err, "a line of 1 MiB ended by %q", end)
		assert.Len(t, props["a"], mib-2)

		_, err = resilience.LoadProperties(strings.NewReader("b=1\n" + line + "y" + end))
		ce := requireCode(t, err, r4c.BadSource)
		assert.Equal(t, "line 2 is longer than 1 MiB", ce.Reason, "ended by %q", end)
	}
	for source, want := range map[string]string{
		"a=\\\nk=" + value(mib) + "\n":   "line 2 is longer than 1 MiB",
		"key=\\\n" + value(mib+1) + "\n": "line 2 is longer than 1 MiB",
		"key\\\n" + value(mib+1) + "\r":  "line 2 is longer than 1 MiB",
		"a=1\nb=\\\n\\\n" + value(mib+5): "line 4 is longer than 1 MiB",
	} {
		_, err := resilience.LoadProperties(strings.NewReader(source))
		ce := requireCode(t, err, r4c.BadSource)
		assert.Equal(t, want, ce.Reason)
		assert.Less(t, len(err.Error()), 100, "the line is not repeated in the message")
	}
	props, err := resilience.LoadProperties(strings.NewReader("key=\\\n" + value(mib) + "\n"))
	require.NoError(t, err, "a continuation line of 1 MiB")
	assert.Len(t, props["key"], mib)
}

// A reader that returns a long line a byte at a time gives the same keys as one that
// returns it whole.
func TestLoadProperties_OneByteReads(t *testing.T) {
	text := "a=" + strings.Repeat("v", 100_000) + "\r\nb = 2\rc: 3\n"
	whole, err := resilience.LoadProperties(strings.NewReader(text))
	require.NoError(t, err)
	bytewise, err := resilience.LoadProperties(iotest.OneByteReader(strings.NewReader(text)))
	require.NoError(t, err)
	assert.Equal(t, whole, bytewise)
	assert.Len(t, whole, 3)
}

// A UTF-8 byte-order mark at the start of a file is not part of the first key (fault:
// the first key was unknown, and the suggestion was the key itself).
func TestLoaders_ByteOrderMarkIsIgnored(t *testing.T) {
	props, err := resilience.LoadProperties(strings.NewReader("\uFEFFdefaults.rateLimiter.maxWait = 1s\ndefaults.retry.maxAttempts = 2\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"defaults.rateLimiter.maxWait": "1s", "defaults.retry.maxAttempts": "2"}, props)
	_, err = resilience.NewRegistry(resilience.WithProperties(props))
	require.NoError(t, err)

	fromYAML, err := resilience.LoadYAML(strings.NewReader("\uFEFFdefaults:\n  rateLimiter:\n    maxWait: 1s\n  retry: {maxAttempts: 2}\n"))
	require.NoError(t, err)
	assert.Equal(t, props, fromYAML)

	// Only at the start: elsewhere the mark is a character of the key, as written.
	props, err = resilience.LoadProperties(strings.NewReader("a = 1\n\uFEFFb = 2\n"))
	require.NoError(t, err)
	assert.Contains(t, props, "\uFEFFb")
}

// A key given twice in one source is R4C-CFG-003, naming both places (fault: the later
// one won silently).
func TestLoaders_KeySetTwiceInOneSource(t *testing.T) {
	_, err := resilience.LoadProperties(strings.NewReader(
		"defaults.rateLimiter.maxWait = 1s\n# comment\ndefaults.retry.delay = 1s\n  defaults.rateLimiter.maxWait: 2s\n"))
	ce := requireCode(t, err, r4c.DuplicateKey)
	assert.Equal(t, "defaults.rateLimiter.maxWait", ce.Key)
	assert.Contains(t, ce.Reason, "lines 1 and 4")

	for doc, lines := range map[string]string{
		"defaults:\n  rateLimiter.permits: 1\n  rateLimiter:\n    permits: 2\n":                   "lines 2 and 4",
		"defaults:\n  rateLimiter: {permits: 2}\n  rateLimiter.permits: 1\n":                      "lines 2 and 3",
		"instances:\n  A.B:\n    rateLimiter: {permits: 1}\n  A:\n    B.rateLimiter.permits: 2\n": "lines 3 and 5",
		"defaults.rateLimiter.permits: 1\ndefaults.rateLimiter.permits: 2\n":                      "lines 1 and 2",
	} {
		_, err := resilience.LoadYAML(strings.NewReader(doc))
		ce := requireCode(t, err, r4c.DuplicateKey)
		assert.Contains(t, ce.Reason, "YAML "+lines, doc)
	}

	_, err = resilience.FromEnviron([]string{
		"R4C_DEFAULTS_RATELIMITER_MAXWAIT=1s", "PATH=/bin", "R4C_defaults_rateLimiter_maxWait=2s",
	})
	ce = requireCode(t, err, r4c.DuplicateKey)
	assert.Equal(t, "defaults.rateLimiter.maxWait", ce.Key)
	assert.Contains(t, ce.Reason, "R4C_DEFAULTS_RATELIMITER_MAXWAIT and R4C_defaults_rateLimiter_maxWait")
	// Ids keep their case: these are two keys.
	props, err := resilience.FromEnviron([]string{"R4C_INSTANCES_Geo_RATELIMITER_PERMITS=1", "R4C_INSTANCES_geo_RATELIMITER_PERMITS=2"})
	require.NoError(t, err)
	assert.Len(t, props, 2)
}

// A key with an empty id or name says so; no suggestion is ever the key given, nor a key
// that is not valid (fault: instances..rateLimiter.permits suggested itself).
func TestNewRegistry_MalformedKeysSayWhatIsWrong(t *testing.T) {
	for key, what := range map[string]string{
		"instances..rateLimiter.permits":     "the instance id is empty",
		"instances.A..B.rateLimiter.permits": "the instance id has an empty part",
		"instances.A.B..rateLimiter.permits": "the instance id has an empty part",
		"configs..rateLimiter.permits":       "the configuration name is empty",
		"configs..q.rateLimiter.permits":     "the configuration name has an empty part",
		"defaults..rateLimiter.permits":      "the key has an empty part",
		".defaults.rateLimiter.permits":      "the key has an empty part",
		"defaults.rateLimiter.permits.":      "the key has an empty part",
		"instances.A.rateLimiter..permits":   "the key has an empty part",
		"configs.q.composition.order":        "no configs.<name> scope",
		" defaults.rateLimiter.permits":      "the key has spaces around it",
		"defaults.rateLimiter.permits\t":     "the key has spaces around it",
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		ce := requireCode(t, err, r4c.UnknownKey)
		assert.Equal(t, key, ce.Key)
		assert.Contains(t, ce.Reason, what, key)
		assert.NotContains(t, ce.Reason, "did you mean "+key+"?")
	}
}

// Every suggestion is a valid key other than the key given.
func TestNewRegistry_SuggestionsAreValidAndNew(t *testing.T) {
	for _, key := range []string{
		"instances..rateLimiter.permits", "instances.A.rateLimiter.permit", "instances.rateLimiter.permits",
		"rateLimiter.permits", "permits", "x", ".", "..", "instances.A.ratelimiter.permits",
		"configs.q.composition.order", "defaults.composition.orders", "instances.A.B.C.retry.maxattempts",
		"instances.A.rateLimiter.permits.x", "defaults.rateLimiter.permits.extra",
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		ce := requireCode(t, err, r4c.UnknownKey)
		_, near, found := strings.Cut(ce.Reason, "did you mean ")
		if !found {
			continue
		}
		near = strings.TrimSuffix(near, "?")
		assert.NotEqual(t, key, near)
		_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{near: "1s"}))
		assert.NotEqual(t, r4c.UnknownKey, r4c.CodeOf(err), "%q suggests %q, which is a key", key, near)
	}
}

// Environment variables that do not fit say what is wrong; the suggestion is never the
// variable given.
func TestFromEnviron_MalformedNamesSayWhatIsWrong(t *testing.T) {
	for name, what := range map[string]string{
		"R4C_INSTANCES_RATELIMITER_PERMITS":    "the instance id is missing",
		"R4C_CONFIGS_RATELIMITER_PERMITS":      "the configuration name is missing",
		"R4C_DEFAULTS_Geo_RATELIMITER_PERMITS": "DEFAULTS takes no name or id",
		"R4C_INSTANCE_Geo_RATELIMITER_PERMITS": "the scope must be DEFAULTS, CONFIGS or INSTANCES",
		"R4C_INSTANCES_Geo_RATELIMITER_PERMIT": "did you mean R4C_INSTANCES_Geo_RATELIMITER_PERMITS?",
		"R4C_X":                                "not a configuration variable",
	} {
		_, err := resilience.FromEnviron([]string{name + "=1"})
		ce := requireCode(t, err, r4c.UnknownKey)
		assert.Contains(t, ce.Reason, what, name)
		assert.NotContains(t, strings.ToUpper(ce.Reason), "DID YOU MEAN "+strings.ToUpper(name)+"?")
	}
}

// An error of a value met when Wrap builds the instance names the whole key that set it
// and the instance (fault: it named rateLimiter.period only).
func TestWrap_ErrorNamesTheWholeKeyOfTheValue(t *testing.T) {
	fn := func(context.Context) (int, error) { return 0, nil }
	wrap := func(props map[string]string, spec resilience.Spec) *policy.ConfigError {
		t.Helper()
		reg, _ := newRegistry(t, resilience.WithProperties(props))
		_, err := resilience.Wrap(reg, "Billing.Charge", fn, spec)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		return ce
	}
	code := []ratelimit.Option{ratelimit.Permits(5), ratelimit.Period(time.Second)}

	ce := wrap(map[string]string{"instances.Billing.Charge.rateLimiter.period": "0"}, resilience.RateLimiter(code...))
	assert.Equal(t, r4c.ZeroPeriod, ce.Code)
	assert.Equal(t, "instances.Billing.Charge.rateLimiter.period", ce.Key)

	// Values NewRegistry cannot check without the permits that code gives.
	ce = wrap(map[string]string{"configs.q.rateLimiter.period": "2ns"},
		resilience.RateLimiter(append(code, ratelimit.UseConfig("q"))...))
	assert.Equal(t, r4c.PeriodTooShort, ce.Code)
	assert.Equal(t, "configs.q.rateLimiter.period", ce.Key)
	assert.Contains(t, ce.Error(), `R4C-REG-001: configs.q.rateLimiter.period = "2ns": `)
	assert.Contains(t, ce.Reason, "(instance Billing.Charge)")

	ce = wrap(map[string]string{"defaults.rateLimiter.period": "2ns"}, resilience.RateLimiter(ratelimit.Permits(5)))
	assert.Equal(t, r4c.PeriodTooShort, ce.Code)
	assert.Equal(t, "defaults.rateLimiter.period", ce.Key)
	assert.Contains(t, ce.Reason, "(instance Billing.Charge)")

	// A value from code, or no value at all: the key that would set it for the instance.
	ce = wrap(nil, resilience.RateLimiter(ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(-time.Second)))
	assert.Equal(t, "instances.Billing.Charge.rateLimiter.maxWait", ce.Key)
	ce = wrap(nil, resilience.RateLimiter(ratelimit.Permits(5)))
	assert.Equal(t, "instances.Billing.Charge.rateLimiter.period", ce.Key)
	assert.NotContains(t, ce.Reason, "(instance")

	// A key of defaults that the code replaces is not the source of the value.
	ce = wrap(map[string]string{"defaults.rateLimiter.maxWait": "1s"},
		resilience.RateLimiter(append(code, ratelimit.MaxWait(-time.Second))...))
	assert.Equal(t, "instances.Billing.Charge.rateLimiter.maxWait", ce.Key)
	// ... and one that the code leaves is.
	ce = wrap(map[string]string{"defaults.rateLimiter.period": "3ns"}, resilience.RateLimiter(ratelimit.Permits(5)))
	assert.Equal(t, "defaults.rateLimiter.period", ce.Key)

	// Every policy: a Name is the instance id.
	ce = wrap(map[string]string{"instances.payments.retry.maxAttempts": "0"}, resilience.Retry(retry.Name("payments")))
	assert.Equal(t, "instances.payments.retry.maxAttempts", ce.Key)
	ce = wrap(map[string]string{"instances.Billing.Charge.bulkhead.maxWait": "-1s"}, resilience.Bulkhead(bulkhead.MaxConcurrent(2)))
	assert.Equal(t, "instances.Billing.Charge.bulkhead.maxWait", ce.Key)
	ce = wrap(map[string]string{"instances.Billing.Charge.timeout.duration": "0"}, resilience.Timeout(time.Second))
	assert.Equal(t, "instances.Billing.Charge.timeout.duration", ce.Key)

	ce = wrap(map[string]string{"configs.known.rateLimiter.permits": "1"},
		resilience.RateLimiter(append(code, ratelimit.UseConfig("unknown"))...))
	assert.Equal(t, r4c.UnknownConfig, ce.Code)
	assert.Contains(t, ce.Reason, "(instance Billing.Charge)")
}

// NewRegistry checks the ranges of the values of the scopes defaults and configs.<name>
// (fault: defaults.retry.maxAttempts = 0 failed only when a function was wrapped).
func TestNewRegistry_RangesOfDefaultsAndConfigs(t *testing.T) {
	for key, tc := range map[string]struct {
		props map[string]string
		code  string
	}{
		"defaults.retry.maxAttempts": {map[string]string{"defaults.retry.maxAttempts": "0"}, r4c.OutOfRange},
		"configs.q.bulkhead.maxWait": {map[string]string{"configs.q.bulkhead.maxWait": "-1s"}, r4c.NegativeDuration},
		"defaults.timeout.duration":  {map[string]string{"defaults.timeout.duration": "-5s"}, r4c.NegativeDuration},
		"configs.cb.circuitBreaker.failureRateThreshold": {
			map[string]string{"configs.cb.circuitBreaker.failureRateThreshold": "101"}, r4c.OutOfRange},
		"defaults.rateLimiter.maxWait": {map[string]string{
			"defaults.rateLimiter.permits": "5", "defaults.rateLimiter.period": "1s", "defaults.rateLimiter.maxWait": "-1s",
		}, r4c.NegativeDuration},
		"configs.q.rateLimiter.permits": {map[string]string{"configs.q.rateLimiter.permits": "-3"}, r4c.BadPermits},
		// A value out of its own range is found also when the others it comes with leave
		// an attribute to code, or break a relation with a default (fault: both passed).
		"configs.w.rateLimiter.maxWait": {map[string]string{"configs.w.rateLimiter.maxWait": "-1s"}, r4c.NegativeDuration},
		"configs.q.rateLimiter.period":  {map[string]string{"configs.q.rateLimiter.period": "-1s"}, r4c.ZeroPeriod},
		"defaults.adaptiveLimit.backoffRatio": {map[string]string{
			"defaults.adaptiveLimit.maxLimit": "10", "defaults.adaptiveLimit.backoffRatio": "5",
		}, r4c.OutOfRange},
		"configs.q.adaptiveLimit.smoothing": {map[string]string{
			"configs.q.adaptiveLimit.maxLimit": "10", "configs.q.adaptiveLimit.smoothing": "7",
		}, r4c.OutOfRange},
		// Two errors: the first key in sorted order is reported.
		"configs.a.retry.jitter": {map[string]string{"configs.b.retry.jitter": "2", "configs.a.retry.jitter": "2"}, r4c.OutOfRange},
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(tc.props))
		ce := requireCode(t, err, tc.code)
		assert.Equal(t, key, ce.Key)
	}
}

// What NewRegistry cannot check without the code's values passes it and fails the wrap,
// with the whole key: a value behind an attribute with no default, and instances. keys.
func TestNewRegistry_RangesLeftToTheWrap(t *testing.T) {
	for _, props := range []map[string]string{
		{"defaults.rateLimiter.period": "2ns"},          // needs the permits
		{"configs.q.rateLimiter.permits": "2000000000"}, // needs the period
		{"defaults.adaptiveLimit.maxLimit": "10"},       // the initial limit may come from code
		{"defaults.rateLimiter.enabled": "false"},
		{"instances.A.retry.maxAttempts": "0"},
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(props))
		require.NoError(t, err, "%v", props)
	}
}

// FuzzNewRegistry_Key: a key of any form never panics NewRegistry; an unknown key's
// suggestion is a valid key other than the key given.
func FuzzNewRegistry_Key(f *testing.F) {
	for _, s := range []string{
		"", ".", "..", "instances..rateLimiter.permits", "defaults.rateLimiter.permit", "configs.q.composition.order",
		"instances.A.rateLimiter.permits.x", " x ", "instances.A.B..retry.delay", "rateLimiter.permits", "a.b.c.d.e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		if r4c.CodeOf(err) != r4c.UnknownKey {
			return
		}
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		_, near, found := strings.Cut(ce.Reason, "did you mean ")
		if !found {
			return
		}
		near = strings.TrimSuffix(near, "?")
		require.NotEqual(t, key, near)
		_, err = resilience.NewRegistry(resilience.WithProperties(map[string]string{near: "1"}))
		require.NotEqual(t, r4c.UnknownKey, r4c.CodeOf(err), "%q suggests %q", key, near)
	})
}

// FuzzFromEnviron: the environment loader never panics; it returns keys of at most
// MaxKeyLen bytes that map back to the variables, or an R4C-CFG code.
func FuzzFromEnviron(f *testing.F) {
	for _, s := range []string{
		"R4C_DEFAULTS_RATELIMITER_MAXWAIT=1s", "R4C_INSTANCES_A__B_RETRY_DELAY=1s", "R4C_INSTANCES__RATELIMITER_PERMITS=1",
		"R4C_=", "R4C_CONFIGS_q_BULKHEAD_MAXWAIT", "R4C_X_Y_Z=1", "R4C_instances_a_b_c_timeout_duration=2s",
	} {
		f.Add(s, "R4C_defaults_rateLimiter_maxWait=1s")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		props, err := resilience.FromEnviron([]string{a, b})
		if err != nil {
			require.Contains(t, []string{r4c.UnknownKey, r4c.BadSource, r4c.DuplicateKey}, r4c.CodeOf(err), "%v", err)
			require.Less(t, len(err.Error()), 4*resilience.MaxKeyLen)
			return
		}
		for k := range props {
			require.LessOrEqual(t, len(k), resilience.MaxKeyLen+len("."))
			require.True(t, strings.HasPrefix(k, "defaults.") || strings.HasPrefix(k, "configs.") || strings.HasPrefix(k, "instances."), k)
		}
	})
}

// The loaders and the suggestion of a key do work in proportion to their input: compare
// ns/op between the sizes of each benchmark.
func BenchmarkLoadProperties_Continuations(b *testing.B) {
	for _, n := range []int{75_000, 150_000, 300_000} {
		src := continuedProperties(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := resilience.LoadProperties(strings.NewReader(src)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDidYouMean_LongKey(b *testing.B) {
	for _, n := range []int{100, 200, 8 << 10, 20 << 10, 100 << 10} {
		props := map[string]string{"instances." + strings.Repeat("x", n) + ".rateLimiter.permitz": "1"}
		b.Run(fmt.Sprintf("id=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := resilience.NewRegistry(resilience.WithProperties(props)); err == nil {
					b.Fatal("an unknown key passed")
				}
			}
		})
	}
}

func BenchmarkFromEnviron_LongName(b *testing.B) {
	for _, n := range []int{100, 200, 8 << 10, 100 << 10} {
		environ := []string{"R4C_INSTANCES_" + strings.Repeat("x", n) + "_RATELIMITER_PERMITZ=1"}
		b.Run(fmt.Sprintf("id=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := resilience.FromEnviron(environ); err == nil {
					b.Fatal("an unknown variable passed")
				}
			}
		})
	}
}

func BenchmarkLoadYAML(b *testing.B) {
	leaves := func(n int) string { // n keys under a prefix of 25 levels of 30 bytes
		var doc strings.Builder
		for i := range 25 {
			doc.WriteString(strings.Repeat(" ", i) + strings.Repeat("p", 30) + ":\n")
		}
		for i := range n {
			fmt.Fprintf(&doc, "%sk%d: 1\n", strings.Repeat(" ", 25), i)
		}
		return doc.String()
	}
	for _, n := range []int{10_000, 20_000, 40_000} {
		doc := leaves(n)
		b.Run(fmt.Sprintf("leaves=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := resilience.LoadYAML(strings.NewReader(doc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNewRegistry_ManyKeys(b *testing.B) {
	for _, n := range []int{10_000, 20_000, 40_000} {
		props := map[string]string{}
		for i := range n {
			props[fmt.Sprintf("instances.Svc%d.Call.rateLimiter.permits", i)] = "5"
			props[fmt.Sprintf("configs.c%d.retry.maxAttempts", i)] = "3"
		}
		b.Run(fmt.Sprintf("keys=%d", 2*n), func(b *testing.B) {
			for b.Loop() {
				if _, err := resilience.NewRegistry(resilience.WithProperties(props)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
