package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// A key whose id no variable can express has no variable name; it never maps to another
// key (fault: EnvName("instances.A__B.….permits") gave a variable read back as
// instances.A.B.….permits).
func TestEnvName_InexpressibleKeysHaveNoName(t *testing.T) {
	for _, key := range []string{
		"instances.A__B.rateLimiter.permits", // __ is read back as a dot
		"instances.a_.b.rateLimiter.permits", // a___b: ambiguous
		"instances.a._b.rateLimiter.permits",
		"configs.x__.retry.delay",
		"configs._.x.retry.delay",
		"instances.a=b.rateLimiter.permits", // NAME=value is cut at the first '='
		"instances.a\x00b.rateLimiter.permits",
		"instances." + strings.Repeat("x", resilience.MaxKeyLen) + ".rateLimiter.permits",
		// Not configuration keys at all.
		"", "x", "defaults.rateLimiter", "instances..rateLimiter.permits", "defaults.rateLimiter.permit",
		"configs.q.composition.order", "defaults.x.rateLimiter.permits",
	} {
		assert.Empty(t, resilience.EnvName(key), "%q", key)
	}
	for key, name := range map[string]string{
		"instances.a_b.rateLimiter.permits":     "R4C_INSTANCES_a_b_RATELIMITER_PERMITS",
		"instances._a_.retry.delay":             "R4C_INSTANCES__a__RETRY_DELAY",
		"instances.A.B.rateLimiter.permits":     "R4C_INSTANCES_A__B_RATELIMITER_PERMITS",
		"configs.geo-quota.bulkhead.maxWait":    "R4C_CONFIGS_geo-quota_BULKHEAD_MAXWAIT",
		"defaults.composition.order":            "R4C_DEFAULTS_COMPOSITION_ORDER",
		"instances.A.composition.order":         "R4C_INSTANCES_A_COMPOSITION_ORDER",
		"instances._.circuitBreaker.waitInOpen": "R4C_INSTANCES___CIRCUITBREAKER_WAITINOPEN",
	} {
		assert.Equal(t, name, resilience.EnvName(key), key)
		requireEnvRoundTrip(t, key)
	}
}

// requireEnvRoundTrip checks that EnvName(key), if not "", is read back as key.
func requireEnvRoundTrip(t *testing.T, key string) {
	t.Helper()
	name := resilience.EnvName(key)
	if name == "" {
		return
	}
	props, err := resilience.FromEnviron([]string{name + "=v"})
	require.NoError(t, err, "%q → %q", key, name)
	require.Equal(t, map[string]string{key: "v"}, props, "%q → %q", key, name)
}

// Three or more underscores in a row do not say where the dots of an id are: R4C-CFG-002,
// saying why (fault: R4C_INSTANCES_a___b_… was read as a._b, though it could mean a_.b).
func TestFromEnviron_AmbiguousUnderscoresAreRefused(t *testing.T) {
	for name, what := range map[string]string{
		"R4C_INSTANCES_a___b_RATELIMITER_PERMITS": "the instance id has 3 underscores in a row",
		"R4C_INSTANCES_____RATELIMITER_PERMITS":   "the instance id has 3 underscores in a row",
		"R4C_CONFIGS_q_____x_RETRY_DELAY":         "the configuration name has 5 underscores in a row",
		"R4C_instances_a____b_retry_delay":        "the instance id has 4 underscores in a row",
	} {
		_, err := resilience.FromEnviron([]string{name + "=1"})
		ce := requireCode(t, err, r4c.BadSource)
		assert.Equal(t, name, ce.Key)
		assert.Contains(t, ce.Reason, what, name)
		assert.Contains(t, ce.Reason, "___ may be _. or ._", name)
	}
	// One underscore is one; two are a dot; a run at either end of the id is the id's.
	props, err := resilience.FromEnviron([]string{
		"R4C_INSTANCES_a_b_RATELIMITER_PERMITS=1", "R4C_INSTANCES_a__b_RATELIMITER_PERMITS=2",
		"R4C_INSTANCES__x_RETRY_DELAY=1s", "R4C_INSTANCES_x__RETRY_DELAY=2s",
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"instances.a_b.rateLimiter.permits": "1", "instances.a.b.rateLimiter.permits": "2",
		"instances._x.retry.delay": "1s", "instances.x_.retry.delay": "2s",
	}, props)
}

// Every key EnvName gives a name for is read back exactly; every key FromEnviron reads
// whose variable EnvName can name round-trips too (fault: ids with underscores next to
// dots mapped to other keys).
func TestEnvName_RoundTripsEveryKeyItNames(t *testing.T) {
	ids := []string{"A", "a_b", "_a", "a_", "_", "A.B", "a._b", "a_.b", "a__b", "a___b", "a.b.c", "x-y", "日本", "a b"}
	segs := map[string][]string{
		"rateLimiter": {"permits", "period", "maxWait", "enabled"}, "retry": {"maxAttempts", "jitter"},
		"circuitBreaker": {"slowCallRateThreshold"}, "composition": {"order"},
	}
	named := 0
	for _, seg := range slices.Sorted(maps.Keys(segs)) {
		for _, attr := range segs[seg] {
			requireEnvRoundTrip(t, "defaults."+seg+"."+attr)
			for _, id := range ids {
				for _, scope := range []string{"configs", "instances"} {
					key := scope + "." + id + "." + seg + "." + attr
					requireEnvRoundTrip(t, key)
					if resilience.EnvName(key) != "" {
						named++
					}
				}
			}
		}
	}
	assert.Greater(t, named, 100)
}

// FuzzEnvNameRoundTrip: FromEnviron(EnvName(key)) is key, for every key EnvName names, and
// for every key FromEnviron reads from a variable.
func FuzzEnvNameRoundTrip(f *testing.F) {
	for _, s := range []string{
		"instances.A__B.rateLimiter.permits", "instances.a_.b.retry.delay", "A.B", "a___b", "_", "a=b",
		"R4C_INSTANCES_a___b_RATELIMITER_PERMITS", "R4C_INSTANCES__x_RETRY_DELAY", "defaults.rateLimiter.permits",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		requireEnvRoundTrip(t, s)
		requireEnvRoundTrip(t, "instances."+s+".rateLimiter.permits")
		requireEnvRoundTrip(t, "configs."+s+".retry.delay")
		props, err := resilience.FromEnviron([]string{s + "=1"})
		if err != nil {
			return
		}
		for key := range props {
			requireEnvRoundTrip(t, key)
		}
	})
}

// The R4C-REG-008 of two configurations names the field that differs, and why errors of
// the same text differ (fault: it printed both configurations with %+v, which looked the
// same).
func TestSharedNameConflict_MessageNamesTheDifference(t *testing.T) {
	fn := func(context.Context) (int, error) { return 0, nil }
	conflict := func(first, second resilience.Spec) *policy.ConfigError {
		t.Helper()
		reg, _ := newRegistry(t)
		_, err := resilience.Wrap(reg, "A.Call", fn, first)
		require.NoError(t, err)
		_, err = resilience.Wrap(reg, "B.Call", fn, second)
		ce := requireCode(t, err, r4c.Conflict)
		assert.Less(t, len(err.Error()), 500, "%v", err)
		return ce
	}

	ce := conflict(resilience.Retry(retry.Name("u"), retry.On(errors.New("x"))),
		resilience.Retry(retry.Name("u"), retry.On(errors.New("x"))))
	assert.Equal(t, "u", ce.Value)
	assert.Equal(t, "functions that share this name resolve different configurations (the instance's vs B.Call's): "+
		"RetryOn: the error values differ (errors are compared by identity, not by text)", ce.Reason)

	ce = conflict(resilience.Retry(retry.Name("u"), retry.MaxAttempts(3)), resilience.Retry(retry.Name("u"), retry.MaxAttempts(4)))
	assert.True(t, strings.HasSuffix(ce.Reason, "(the instance's vs B.Call's): MaxAttempts: 3 vs 4"), ce.Reason)

	ce = conflict(resilience.Retry(retry.Name("u"), retry.AbortOn(errors.New("x"))),
		resilience.Retry(retry.Name("u"), retry.AbortOn(errors.New("x"), errors.New("y"))))
	assert.True(t, strings.HasSuffix(ce.Reason, "AbortOn: 1 error vs 2 errors"), ce.Reason)

	ce = conflict(resilience.Retry(retry.Name("u"), retry.If(func(int, error) bool { return true })),
		resilience.Retry(retry.Name("u"), retry.If(func(int, error) bool { return true })))
	assert.Contains(t, ce.Reason, "result predicate: the predicates differ")

	base := []ratelimit.Option{ratelimit.Name("q"), ratelimit.Permits(5), ratelimit.Period(time.Second)}
	ce = conflict(resilience.RateLimiter(base...),
		resilience.RateLimiter(ratelimit.Name("q"), ratelimit.Permits(50), ratelimit.Period(10*time.Second), ratelimit.MaxWait(time.Second)))
	assert.True(t, strings.HasSuffix(ce.Reason, "Permits: 5 vs 50; Period: 1s vs 10s; MaxWait: 0s vs 1s"), ce.Reason)
	assert.NotContains(t, ce.Reason, "{")

	// Long lists and long ids keep the message short.
	many := make([]error, 100_000)
	for i := range many {
		many[i] = fmt.Errorf("e%d", i)
	}
	reg, _ := newRegistry(t)
	long := strings.Repeat("n", 50_000)
	_, err := resilience.Wrap(reg, long, fn, resilience.Retry(retry.Name("u"), retry.On(many...)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, long+"2", fn, resilience.Retry(retry.Name("u"), retry.On(many[1:]...)))
	requireCode(t, err, r4c.Conflict)
	assert.Less(t, len(err.Error()), 500, "%v", err)
	assert.Contains(t, err.Error(), "RetryOn: 100000 errors vs 99999 errors")
}

// A key that names a policy but no attribute, a scope and nothing more, or that goes on
// after an attribute says so (fault: instances.A.rateLimiter suggested
// instances.A.retry.jitter).
func TestNewRegistry_IncompleteKeysSayWhatIsWrong(t *testing.T) {
	for key, want := range map[string][]string{
		"instances.A.rateLimiter": {
			"names the policy rateLimiter but no attribute; its attributes are permits, period, maxWait, windows, enabled",
			"e.g. instances.A.rateLimiter.permits",
		},
		"instances.A.B.ratelimiter": {"names the policy rateLimiter", "e.g. instances.A.B.rateLimiter.permits"},
		"defaults.circuitBreaker":   {"its attributes are failureRateThreshold, slidingWindowSize", "e.g. defaults.circuitBreaker.failureRateThreshold"},
		"defaults.composition":      {"names the composition segment but no attribute; its attributes are order", "e.g. defaults.composition.order"},
		"rateLimiter":               {"names the policy rateLimiter but no attribute", "keys are defaults.<policy>.<attribute>"},
		"instances.A.rateLimiter.permits.x": {
			"goes on after the attribute rateLimiter.permits", "did you mean instances.A.rateLimiter.permits?",
		},
		"defaults.retry.maxAttempts.x.y": {"goes on after the attribute retry.maxAttempts", "did you mean defaults.retry.maxAttempts?"},
		"configs.q.Retry.Delay.x":        {"goes on after the attribute retry.delay", "did you mean configs.q.retry.delay?"},
		"defaults":                       {"names the scope defaults but no policy or attribute", "keys are defaults.<policy>.<attribute>"},
		"instances":                      {"names the scope instances but no policy or attribute"},
		"instances.A":                    {"names an instance but no policy or attribute: instances.<id>.<policy>.<attribute>"},
		"configs.q":                      {"names a configuration but no policy or attribute: configs.<name>.<policy>.<attribute>"},
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		ce := requireCode(t, err, r4c.UnknownKey)
		assert.Equal(t, key, ce.Key)
		for _, w := range want {
			assert.Contains(t, ce.Reason, w, key)
		}
		assert.NotContains(t, ce.Reason, "retry.jitter?", key)
	}
	// Long keys get no example, and a short message.
	long := "instances." + strings.Repeat("x", 20_000) + ".rateLimiter"
	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{long: "1"}))
	ce := requireCode(t, err, r4c.UnknownKey)
	assert.Contains(t, ce.Reason, "names the policy rateLimiter but no attribute")
	assert.Less(t, len(err.Error()), 1000)
}

// The same for environment variables (fault: R4C_DEFAULTS_RATELIMITER suggested
// R4C_DEFAULTS_RETRY_JITTER).
func TestFromEnviron_IncompleteNamesSayWhatIsWrong(t *testing.T) {
	for name, want := range map[string][]string{
		"R4C_DEFAULTS_RATELIMITER": {
			"names the policy RATELIMITER but no attribute; its attributes are PERMITS, PERIOD, MAXWAIT, WINDOWS, ENABLED",
			"did you mean R4C_DEFAULTS_RATELIMITER_PERMITS?",
		},
		"R4C_INSTANCES_my_app_retry":            {"names the policy RETRY", "did you mean R4C_INSTANCES_my_app_retry_MAXATTEMPTS?"},
		"R4C_DEFAULTS_COMPOSITION":              {"names the COMPOSITION segment", "did you mean R4C_DEFAULTS_COMPOSITION_ORDER?"},
		"R4C_DEFAULTS_RATELIMITER_PERMITS_X":    {"goes on after the attribute RATELIMITER_PERMITS", "did you mean R4C_DEFAULTS_RATELIMITER_PERMITS?"},
		"R4C_INSTANCES_A__B_retry_delay_x_y":    {"goes on after the attribute RETRY_DELAY", "did you mean R4C_INSTANCES_A__B_retry_delay?"},
		"R4C_DEFAULTS":                          {"names the scope DEFAULTS but no policy or attribute"},
		"R4C_configs":                           {"names the scope CONFIGS but no policy or attribute"},
		"R4C_INSTANCES_A":                       {"names an instance but no policy or attribute"},
		"R4C_CONFIGS_q":                         {"names a configuration but no policy or attribute"},
		"R4C_INSTANCES_RATELIMITER":             {"names the policy RATELIMITER but no attribute"},
		"R4C_INSTANCES_A_RATELIMITER_PERMITS_x": {"did you mean R4C_INSTANCES_A_RATELIMITER_PERMITS?"},
	} {
		_, err := resilience.FromEnviron([]string{name + "=1"})
		ce := requireCode(t, err, r4c.UnknownKey)
		for _, w := range want {
			assert.Contains(t, ce.Reason, w, name)
		}
		assert.NotContains(t, ce.Reason, "RETRY_JITTER?", name)
	}
}

// "\n", "\r\n" and "\r" alone each end a line, in any mix, continuation lines included
// (fault: a file with "\r" line endings was read as one line).
func TestLoadProperties_EveryLineTerminator(t *testing.T) {
	want := map[string]string{"a.b.c": "1", "d.e.f": "2 3", "g.h.i": "x"}
	lines := []string{"# comment \\", "a.b.c = 1", "", "d.e.f = 2 \\", "  3", "! comment", "g.h.i: x"}
	for name, term := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		src := strings.Join(lines, term) + term
		assert.Equal(t, want, mustProperties(t, src), name)
		// One byte at a time: a "\r" at the end of what was read so far waits for its "\n".
		props, err := resilience.LoadProperties(iotest.OneByteReader(strings.NewReader(src)))
		require.NoError(t, err, name)
		assert.Equal(t, want, props, name)
		// Line numbers count each terminator once.
		_, err = resilience.LoadProperties(strings.NewReader(src + "a.b.c = 9" + term))
		ce := requireCode(t, err, r4c.DuplicateKey)
		assert.Contains(t, ce.Reason, "lines 2 and 8", name)
	}
	// Mixed; "\n\r" is two terminators, with an empty line between them.
	src := "a.b.c = 1\rd.e.f = 2 \\\r\n  3\ng.h.i: \\\r  x\n\r"
	assert.Equal(t, want, mustProperties(t, src))
	_, err := resilience.LoadProperties(strings.NewReader("k = 1\n\rk = 2"))
	ce := requireCode(t, err, r4c.DuplicateKey)
	assert.Contains(t, ce.Reason, "lines 1 and 3")
	_, err = resilience.LoadProperties(iotest.OneByteReader(strings.NewReader("k = 1\r\r\nk = 2\r")))
	ce = requireCode(t, err, r4c.DuplicateKey)
	assert.Contains(t, ce.Reason, "lines 1 and 3")
	// Many "\r"-ended continuation lines are joined in linear time; the test's timeout is
	// the bound.
	const n = 200_000
	v := mustProperties(t, "k = x\\\r"+strings.Repeat("yy\\\r", n)+"z\r")["k"]
	assert.Len(t, v, 1+2*n+1)
}

// A mapping key repeated in one mapping, at any level, is R4C-CFG-003 naming both lines
// (fault: two `defaults:` or two `rateLimiter:` were merged silently).
func TestLoadYAML_RepeatedMappingKeys(t *testing.T) {
	for doc, tc := range map[string]struct{ key, lines string }{
		"defaults:\n  rateLimiter:\n    permits: 1\ndefaults:\n  retry:\n    maxAttempts: 2\n":             {"defaults", "YAML lines 1 and 4"},
		"defaults:\n  rateLimiter:\n    permits: 1\n  rateLimiter:\n    period: 1s\n":                      {"defaults.rateLimiter", "YAML lines 2 and 4"},
		"instances:\n  A:\n    retry: {delay: 1s}\n  B:\n    retry: {delay: 1s}\n  A:\n    bulkhead: {}\n": {"instances.A", "YAML lines 2 and 6"},
		"defaults: {retry: {delay: 1s}, retry: {maxAttempts: 2}}\n":                                        {"defaults.retry", "YAML lines 1 and 1"},
		"defaults:\n  retry:\n    delay: 1s\n    delay: 2s\n":                                              {"defaults.retry.delay", "YAML lines 3 and 4"},
		"configs:\n  q:\n    retry: {delay: 1s}\n  'q':\n    retry: {jitter: 0.5}\n":                       {"configs.q", "YAML lines 2 and 4"},
	} {
		for _, term := range []string{"\n", "\r\n", "\r"} { // YAML's line breaks too
			_, err := resilience.LoadYAML(strings.NewReader(strings.ReplaceAll(doc, "\n", term)))
			ce := requireCode(t, err, r4c.DuplicateKey)
			assert.Equal(t, tc.key, ce.Key, doc)
			assert.Contains(t, ce.Reason, tc.lines, doc)
		}
	}
	// Keys repeated in different mappings are different keys.
	props, err := resilience.LoadYAML(strings.NewReader("defaults:\n  retry: {delay: 1s}\nconfigs:\n  q:\n    retry: {delay: 2s}\n"))
	require.NoError(t, err)
	assert.Len(t, props, 2)
}

// Wrapping one id twice with different settings, and no Name, says that: the same id was
// wrapped twice, not that functions share a name no one gave (fault: the message spoke of
// "functions that share this name"). With a Name, the message speaks of the shared name.
func TestConflict_MessageSaysWhetherANameWasGiven(t *testing.T) {
	fn := func(context.Context) (int, error) { return 1, nil }

	reg, _ := newRegistry(t)
	_, err := resilience.Wrap(reg, "A.Call", fn, resilience.Retry(retry.MaxAttempts(3)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "A.Call", fn, resilience.Retry(retry.MaxAttempts(4)))
	ce := requireCode(t, err, "R4C-REG-008")
	assert.Equal(t, "A.Call", ce.Value)
	assert.Equal(t, "the id A.Call is wrapped twice with different settings (the first wrap's vs this one's): MaxAttempts: 3 vs 4; "+
		"the wraps of one id share its instances: give them the same settings, or each its own id", ce.Reason)
	assert.NotContains(t, ce.Reason, "name")

	reg, _ = newRegistry(t)
	_, err = resilience.Wrap(reg, "A.Call", fn, resilience.Retry(retry.Name("shared"), retry.MaxAttempts(3)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "B.Call", fn, resilience.Retry(retry.Name("shared"), retry.MaxAttempts(4)))
	ce = requireCode(t, err, "R4C-REG-008")
	assert.Equal(t, "shared", ce.Value)
	assert.Equal(t, "functions that share this name resolve different configurations (the instance's vs B.Call's): MaxAttempts: 3 vs 4", ce.Reason)

	// An instance named after the id of a later wrap without a Name: the name is shared.
	reg, _ = newRegistry(t)
	_, err = resilience.Wrap(reg, "A.Call", fn, resilience.Retry(retry.Name("B.Call"), retry.MaxAttempts(3)))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "B.Call", fn, resilience.Retry(retry.MaxAttempts(4)))
	ce = requireCode(t, err, "R4C-REG-008")
	assert.Equal(t, "functions that share this name resolve different configurations (the instance's vs B.Call's): MaxAttempts: 3 vs 4", ce.Reason)
}
