package resilience_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// limiterConfig wraps a function with a rate limiter spec and returns the limiter's
// resolved configuration.
func limiterConfig(t *testing.T, props map[string]string, id string, opts ...ratelimit.Option) ratelimit.Config {
	t.Helper()
	reg, _ := newRegistry(t, resilience.WithProperties(props))
	_, err := resilience.Wrap(reg, id, func(ctx context.Context) (int, error) { return 0, nil }, resilience.RateLimiter(opts...))
	require.NoError(t, err)
	limiters := reg.Snapshot().RateLimiters
	require.Len(t, limiters, 1)
	h, err := reg.RateLimiter(limiters[0].Instance) // the Name, if any, else id
	require.NoError(t, err)
	return h.(*ratelimit.Limiter).Config()
}

// SPEC RG-4: the precedence, lowest first: built-in defaults, defaults., code,
// configs.<name>., instances.<id>. One test per level.
func TestRG4_BuiltInDefaults(t *testing.T) {
	cfg := limiterConfig(t, nil, "A.B", ratelimit.Permits(3), ratelimit.Period(time.Second))
	assert.Equal(t, ratelimit.Config{Permits: 3, Period: time.Second, MaxWait: 0}, cfg)
}

func TestRG4_DefaultsOverBuiltIn(t *testing.T) {
	cfg := limiterConfig(t, map[string]string{
		"defaults.rateLimiter.maxWait": "250ms",
		"defaults.rateLimiter.permits": "8",
		"defaults.rateLimiter.period":  "2s",
	}, "A.B")
	assert.Equal(t, ratelimit.Config{Permits: 8, Period: 2 * time.Second, MaxWait: 250 * time.Millisecond}, cfg)
}

func TestRG4_CodeOverDefaults(t *testing.T) {
	cfg := limiterConfig(t, map[string]string{
		"defaults.rateLimiter.permits": "8",
		"defaults.rateLimiter.period":  "2s",
	}, "A.B", ratelimit.Permits(3))
	assert.Equal(t, 3, cfg.Permits)
	assert.Equal(t, 2*time.Second, cfg.Period, "what code leaves alone comes from defaults.")
}

func TestRG4_ConfigsOverCode(t *testing.T) {
	cfg := limiterConfig(t, map[string]string{
		"configs.geocoding-quota.rateLimiter.permits": "5",
		"configs.geocoding-quota.rateLimiter.maxWait": "500ms",
	}, "A.B", ratelimit.UseConfig("geocoding-quota"), ratelimit.Permits(3), ratelimit.Period(time.Second))
	assert.Equal(t, ratelimit.Config{Permits: 5, Period: time.Second, MaxWait: 500 * time.Millisecond}, cfg)
}

func TestRG4_InstancesOverConfigs(t *testing.T) {
	props := map[string]string{
		"configs.q.rateLimiter.permits":                  "5",
		"configs.q.rateLimiter.period":                   "1s",
		"instances.SearchAPI.Search.rateLimiter.permits": "20",
		"instances.SearchAPI.Search.rateLimiter.enabled": "false",
	}
	cfg := limiterConfig(t, props, "SearchAPI.Search", ratelimit.UseConfig("q"), ratelimit.Permits(3))
	assert.Equal(t, ratelimit.Config{Permits: 20, Period: time.Second, Disabled: true}, cfg)
	other := limiterConfig(t, props, "SearchAPI.Other", ratelimit.UseConfig("q"))
	assert.Equal(t, 5, other.Permits, "instances. keys are for their id only")
}

// SPEC RG-4: ids that contain dots are parsed from the right, and a Name is the id that
// instances. keys address.
func TestRG4_DottedIDsAndNames(t *testing.T) {
	cfg := limiterConfig(t, map[string]string{
		"instances.com.example.Geo.rateLimiter.permits": "9",
		"instances.com.example.Geo.rateLimiter.period":  "3s",
	}, "com.example.Geo")
	assert.Equal(t, 9, cfg.Permits)
	assert.Equal(t, 3*time.Second, cfg.Period)

	named := limiterConfig(t, map[string]string{"instances.geocoding.rateLimiter.permits": "7"},
		"Geo.Geocode", ratelimit.Name("geocoding"), ratelimit.Permits(5), ratelimit.Period(time.Second))
	assert.Equal(t, 7, named.Permits)
}

// Configuration keys apply to every policy segment, not only the rate limiter's.
func TestRG4_OtherSegments(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"instances.Svc.Call.bulkhead.maxConcurrent":    "3",
		"defaults.circuitBreaker.slidingWindowSize":    "4",
		"defaults.circuitBreaker.minimumCalls":         "4",
		"defaults.retry.maxAttempts":                   "5",
		"defaults.timeout.duration":                    "2s",
		"instances.Svc.Call.fallback.enabled":          "true",
		"instances.Svc.Call.circuitBreaker.waitInOpen": "10s",
	}))
	_, err := resilience.Wrap(reg, "Svc.Call", func(ctx context.Context) (int, error) { return 0, nil },
		resilience.Bulkhead(), resilience.CircuitBreaker(), resilience.Retry(), resilience.Timeout(time.Second))
	require.NoError(t, err)
	bh, err := resilience.Lookup[*bulkhead.Bulkhead](reg, bulkhead.Layer, "Svc.Call")
	require.NoError(t, err)
	assert.Equal(t, 3, bh.Snapshot().MaxConcurrent)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "Svc.Call")
	require.NoError(t, err)
	assert.Equal(t, "closed", cb.Snapshot().State)
}

// R4C-ATR-001: a bad duration in a configuration key fails NewRegistry, naming the key.
func TestConfigErrors_BadDuration(t *testing.T) {
	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{
		"defaults.rateLimiter.period": "10 parsecs",
	}))
	ce := requireCode(t, err, r4c.BadDuration)
	assert.Equal(t, "defaults.rateLimiter.period", ce.Key)
	assert.Equal(t, "10 parsecs", ce.Value)
	assert.Contains(t, err.Error(), `defaults.rateLimiter.period = "10 parsecs"`)
}

// R4C-ATR-006: enabled is not a boolean.
func TestConfigErrors_BadBoolean(t *testing.T) {
	_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{
		"instances.A.rateLimiter.enabled": "yes please",
	}))
	ce := requireCode(t, err, r4c.BadBoolean)
	assert.Equal(t, "instances.A.rateLimiter.enabled", ce.Key)
	assert.Contains(t, err.Error(), `"true" or "false"`)
}

// R4C-ATR-003 and R4C-ATR-002 from keys: validated when the instance is built.
func TestConfigErrors_ValuesFromKeysAreValidated(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"instances.A.rateLimiter.permits": "0",
		"instances.B.rateLimiter.period":  "0",
	}))
	_, err := resilience.Wrap(reg, "A", func(ctx context.Context) (int, error) { return 0, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	requireCode(t, err, r4c.BadPermits)
	_, err = resilience.Wrap(reg, "B", func(ctx context.Context) (int, error) { return 0, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	requireCode(t, err, r4c.ZeroPeriod)
}

// R4C-REG-004: a spec selects an unknown configs.<name>.
func TestConfigErrors_UnknownConfigName(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"configs.known.rateLimiter.permits": "1"}))
	_, err := resilience.Wrap(reg, "A", func(ctx context.Context) (int, error) { return 0, nil },
		resilience.RateLimiter(ratelimit.UseConfig("unknown"), ratelimit.Permits(1), ratelimit.Period(time.Second)))
	ce := requireCode(t, err, r4c.UnknownConfig)
	assert.Equal(t, "unknown", ce.Value)
	assert.Contains(t, err.Error(), "configs.unknown")

	// A name whose keys are all another policy's is unknown to this one (fault: it was
	// accepted, and the retry ran with its options in code alone).
	_, err = resilience.Wrap(reg, "B", func(ctx context.Context) (int, error) { return 0, nil },
		resilience.Retry(retry.UseConfig("known")))
	ce = requireCode(t, err, r4c.UnknownConfig)
	assert.Equal(t, "retry.useConfig", ce.Key)
	assert.Contains(t, err.Error(), "configs.known.retry.*")
}

// R4C-REG-008: one name, two configurations — also when the difference comes from keys.
func TestConfigErrors_SharedNameDifferentConfig(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"configs.slow.rateLimiter.maxWait": "1s"}))
	fn := func(ctx context.Context) (int, error) { return 0, nil }
	base := []ratelimit.Option{ratelimit.Name("quota"), ratelimit.Permits(5), ratelimit.Period(time.Second)}
	_, err := resilience.Wrap(reg, "A", fn, resilience.RateLimiter(base...))
	require.NoError(t, err)
	_, err = resilience.Wrap(reg, "B", fn, resilience.RateLimiter(base...))
	require.NoError(t, err, "the same configuration shares")
	_, err = resilience.Wrap(reg, "C", fn, resilience.RateLimiter(append(base, ratelimit.UseConfig("slow"))...))
	ce := requireCode(t, err, r4c.Conflict)
	assert.Equal(t, "quota", ce.Value)
	assert.Contains(t, ce.Reason, "MaxWait")
}

// R4C-REG-009 is covered by TestRG3_UnknownIDAndSortedSnapshot.

// R4C-CFG-001: an unknown key; the message names the closest valid key.
func TestConfigErrors_UnknownKeySuggestsClosest(t *testing.T) {
	for key, want := range map[string]string{
		"instances.SearchAPI.Search.rateLimiter.permit":  "instances.SearchAPI.Search.rateLimiter.permits",
		"instances.SearchAPI.Search.ratelimiter.maxWait": "instances.SearchAPI.Search.rateLimiter.maxWait",
		"default.rateLimiter.period":                     "defaults.rateLimiter.period",
		"configs.geo.rateLimiter.maxwait":                "configs.geo.rateLimiter.maxWait",
		"defaults.circuitBreaker.failureRate":            "defaults.circuitBreaker.failureRateThreshold",
		"rateLimiter.permits":                            "defaults.rateLimiter.permits",
		"defaults.rateLimiter.permits.extra":             "defaults.rateLimiter.permits",
		"instances.A.B.rateLimiter.permits.extra":        "instances.A.B.rateLimiter.permits",
	} {
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		ce := requireCode(t, err, r4c.UnknownKey)
		assert.Equal(t, key, ce.Key)
		assert.Contains(t, ce.Reason, "did you mean "+want+"?", key)
	}
}

// Round trips: the same configuration from properties, YAML and the environment resolves
// the same keys and the same limiter.
func TestRG4_RoundTrips(t *testing.T) {
	want := map[string]string{
		"defaults.rateLimiter.maxWait":                   "0",
		"configs.geocoding-quota.rateLimiter.permits":    "5",
		"configs.geocoding-quota.rateLimiter.period":     "1s",
		"configs.geocoding-quota.rateLimiter.maxWait":    "500ms",
		"instances.SearchAPI.Search.rateLimiter.permits": "20",
		"instances.SearchAPI.Search.rateLimiter.enabled": "false",
	}
	fromProps, err := resilience.LoadProperties(strings.NewReader(`
# the API.md example
defaults.rateLimiter.maxWait                  = 0
configs.geocoding-quota.rateLimiter.permits   = 5
configs.geocoding-quota.rateLimiter.period    = 1s
configs.geocoding-quota.rateLimiter.maxWait   : 500ms
! another comment
instances.SearchAPI.Search.rateLimiter.permits = \
    20
instances.SearchAPI.Search.rateLimiter.enabled = false
`))
	require.NoError(t, err)
	assert.Equal(t, want, fromProps)

	fromYAML, err := resilience.LoadYAML(strings.NewReader(`
defaults:
  rateLimiter:
    maxWait: 0
configs:
  geocoding-quota:
    rateLimiter: {permits: 5, period: 1s, maxWait: 500ms}
instances:
  SearchAPI.Search:
    rateLimiter:
      permits: 20
      enabled: false
`))
	require.NoError(t, err)
	assert.Equal(t, want, fromYAML)

	var environ []string
	for k, v := range want {
		environ = append(environ, resilience.EnvName(k)+"="+v)
	}
	environ = append(environ, "PATH=/usr/bin", "R4C=not ours")
	fromEnv, err := resilience.FromEnviron(environ)
	require.NoError(t, err)
	assert.Equal(t, want, fromEnv)
	assert.Equal(t, "R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS", resilience.EnvName("instances.SearchAPI.Search.rateLimiter.permits"))
	assert.Equal(t, "R4C_DEFAULTS_RATELIMITER_MAXWAIT", resilience.EnvName("defaults.rateLimiter.maxWait"))

	for _, props := range []map[string]string{fromProps, fromYAML, fromEnv} {
		cfg := limiterConfig(t, props, "SearchAPI.Search", ratelimit.UseConfig("geocoding-quota"))
		assert.Equal(t, ratelimit.Config{Permits: 20, Period: time.Second, MaxWait: 500 * time.Millisecond, Disabled: true}, cfg)
	}
}

// FromEnv reads the process environment, case-insensitively for the fixed segments.
func TestFromEnv(t *testing.T) {
	t.Setenv("R4C_DEFAULTS_RATELIMITER_MAXWAIT", "1s")
	t.Setenv("R4C_instances_Geo__Geocode_rateLimiter_permits", "4")
	props, err := resilience.FromEnv()
	require.NoError(t, err)
	assert.Equal(t, "1s", props["defaults.rateLimiter.maxWait"])
	assert.Equal(t, "4", props["instances.Geo.Geocode.rateLimiter.permits"])

	t.Setenv("R4C_INSTANCES_Geo_RATELIMITER_PERMIT", "4")
	_, err = resilience.FromEnv()
	ce := requireCode(t, err, r4c.UnknownKey)
	assert.Contains(t, ce.Reason, "R4C_INSTANCES_Geo_RATELIMITER_PERMITS")
}

// Malformed sources are R4C-CFG-002.
func TestLoaders_MalformedSources(t *testing.T) {
	_, err := resilience.LoadProperties(strings.NewReader("a.b.c=1\njust words\n"))
	ce := requireCode(t, err, r4c.BadSource)
	assert.Contains(t, ce.Reason, "line 2")
	_, err = resilience.LoadProperties(strings.NewReader("=value\n"))
	requireCode(t, err, r4c.BadSource)

	for _, doc := range []string{"- a\n- b\n", "defaults:\n  rateLimiter:\n    permits:\n", "a: [1, 2]\n", "a: {b: 1\n"} {
		_, err = resilience.LoadYAML(strings.NewReader(doc))
		requireCode(t, err, r4c.BadSource)
	}
	empty, err := resilience.LoadYAML(strings.NewReader(""))
	require.NoError(t, err)
	assert.Empty(t, empty)
}

// FuzzLoadProperties: the parser never panics; what it returns has non-empty trimmed keys
// and trimmed values; a written-out result parses back to itself.
func FuzzLoadProperties(f *testing.F) {
	for _, s := range []string{
		"a=b", "a: b", "# c\n! d\n\na.b.c = 1s\n", "k=\\\n  v", "x", "=y", " k = v = w ", "k:", "\\", "a=b\\",
		"a=1\na=2\n", "\uFEFFa=b", "k=\\\\\\\n\\\\\\\nx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		props, err := resilience.LoadProperties(strings.NewReader(s))
		if err != nil {
			require.Contains(t, []string{r4c.BadSource, r4c.DuplicateKey}, r4c.CodeOf(err), "%v", err)
			return
		}
		var b strings.Builder
		b.WriteString("# written out\n") // a key starting with a byte-order mark is not at the start
		for k, v := range props {
			require.NotEmpty(t, k)
			require.Equal(t, strings.TrimSpace(k), k)
			require.Equal(t, strings.TrimSpace(v), v)
			if strings.ContainsAny(k, "=:\n\r#!\\") || strings.ContainsAny(v, "\n\r\\") {
				return // not representable one per line
			}
			b.WriteString(k + "=" + v + "\n")
		}
		again, err := resilience.LoadProperties(strings.NewReader(b.String()))
		require.NoError(t, err)
		require.Equal(t, props, again)
	})
}

// YAML anchors, aliases and merge keys are refused (R4C-CFG-002): a recursive alias
// would never end, and a merge key would land as a literal id segment.
func TestLoadYAML_AnchorsAliasesAndMergeKeysAreRefused(t *testing.T) {
	for _, doc := range []string{
		"a: &x\n  b: *x\n",
		"a: &x {b: 1}\nc: *x\n",
		"instances:\n  SearchAPI.Search:\n    <<: {rateLimiter: {permits: 5}}\n",
		"defaults:\n  rateLimiter:\n    permits: &n 5\n",
	} {
		requireYAMLCode(t, doc, r4c.BadSource)
	}
}

// requireYAMLCode checks that LoadYAML refuses doc with code.
func requireYAMLCode(t *testing.T, doc, code string) {
	t.Helper()
	_, err := resilience.LoadYAML(strings.NewReader(doc))
	requireCode(t, err, code)
}

// The configuration is one YAML document: anything after it that is not empty is refused
// (R4C-CFG-002) rather than dropped, while an error in the first document is reported as
// such; a trailing '---', a comment or a null after it is not refused, and an empty or null
// document is an empty map.
func TestLoadYAML_OneDocument(t *testing.T) {
	for _, doc := range []string{
		"a: 1\n---\nb: 2\n",
		"a: 1\n---\n---\nb: 2\n",
		"a: 1\n---\n[1]\n",
		"a: 1\n---\n'x'\n",
		"a: 1\n---\n{}\n",
		"a: 1\n---\n[\n",
		"{a: 1}\nb: 2\n",
		"a: 1\n...\nb: 2\n",
	} {
		requireYAMLCode(t, doc, r4c.BadSource)
	}
	requireYAMLCode(t, "a: 1\na: 2\n---\nb: 1\n", r4c.DuplicateKey)

	for _, doc := range []string{
		"a: 1\n---\n", "---\na: 1\n", "a: 1\n---\n# nothing\n", "a: 1\n...\n",
		"a: 1\n---\n~\n", "a: 1\n--- null\n", "a: 1\r\n---\r\n",
	} {
		props, err := resilience.LoadYAML(strings.NewReader(doc))
		require.NoError(t, err, "%q", doc)
		assert.Equal(t, map[string]string{"a": "1"}, props, "%q", doc)
	}
	for _, doc := range []string{"", "# nothing\n", "---\n", "~\n", "---\n---\n"} {
		props, err := resilience.LoadYAML(strings.NewReader(doc))
		require.NoError(t, err, "%q", doc)
		assert.Empty(t, props, "%q", doc)
	}
}

// A comment never continues on the next line; only an odd number of trailing backslashes
// continues a line.
func TestLoadProperties_Continuations(t *testing.T) {
	props, err := resilience.LoadProperties(strings.NewReader(
		"# a comment that ends with a backslash \\\ndefaults.rateLimiter.maxWait=1s\n" +
			"a.b.c = x\\\\\nd.e.f = y\\\\\\\n  z\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"defaults.rateLimiter.maxWait": "1s",
		"a.b.c":                        `x\\`,
		"d.e.f":                        `y\\z`,
	}, props)
}

// Keys with an empty name or id are unknown keys, and say so.
func TestConfigErrors_EmptyIDIsUnknown(t *testing.T) {
	for _, key := range []string{"instances...rateLimiter.permits", "configs..rateLimiter.permits", "instances..x.rateLimiter.permits"} {
		_, err := resilience.NewRegistry(resilience.WithProperties(map[string]string{key: "1"}))
		ce := requireCode(t, err, r4c.UnknownKey)
		assert.Regexp(t, "(instance id|configuration name) (is empty|has an empty part)", ce.Reason)
		assert.NotContains(t, ce.Reason, "did you mean")
	}
}

// FuzzLoadYAML: the loader never panics or hangs; it returns a map or an R4C-CFG-002.
func FuzzLoadYAML(f *testing.F) {
	for _, s := range []string{
		"a: 1", "a: {b: 1s}", "a: &x\n  b: *x\n", "- 1", "a:\n  <<: {b: 1}", "a: [1]", "", "a: !!binary x", "? [a]\n: 1",
		"a.b: 1\na: {b: 2}\n", "\uFEFFa: 1", "a: 1\n---\nb: 2\n", "a: 1\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		props, err := resilience.LoadYAML(strings.NewReader(s))
		if err != nil {
			require.Contains(t, []string{r4c.BadSource, r4c.DuplicateKey}, r4c.CodeOf(err), "%v", err)
			return
		}
		for k := range props {
			require.NotEmpty(t, k)
			require.LessOrEqual(t, len(k), resilience.MaxKeyLen)
		}
	})
}

// A typo in an instance id or a config name cannot fail NewRegistry, which does not know
// the ids to come; UnusedKeys finds the keys that no instance used.
func TestUnusedKeysFindsTyposInIDs(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"instances.Demo.Call.rateLimiter.permits": "2",
		"instances.Demo.Cal.rateLimiter.permits":  "3",
		"configs.geo.rateLimiter.permits":         "4",
		"defaults.rateLimiter.period":             "1s",
		"defaults.retry.maxAttempts":              "2",
	}))
	assert.Len(t, reg.UnusedKeys(), 5, "nothing is used before the first wrap")
	_, err := resilience.Wrap(reg, "Demo.Call", func(ctx context.Context) (int, error) { return 0, nil },
		resilience.RateLimiter())
	require.NoError(t, err)
	assert.Equal(t, []string{
		"configs.geo.rateLimiter.permits",
		"defaults.retry.maxAttempts",
		"instances.Demo.Cal.rateLimiter.permits",
	}, reg.UnusedKeys())
}

// A wrap that fails uses no configuration key: UnusedKeys still lists its keys.
func TestUnusedKeys_FailedWrapUsesNoKey(t *testing.T) {
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{"instances.G.Call.retry.maxAttempts": "0"}))
	_, err := resilience.Wrap(reg, "G.Call", func(context.Context) (int, error) { return 0, nil }, resilience.Retry())
	requireCode(t, err, r4c.OutOfRange)
	assert.Equal(t, []string{"instances.G.Call.retry.maxAttempts"}, reg.UnusedKeys())
}

// Timeout(d): the keys of configs.<name> and instances.<id> override d, d overrides
// defaults.timeout.duration, and a d of 0 leaves the duration to the configuration
// (fault: Timeout(0) failed although defaults.timeout.duration was set, as its error
// message advised).
func TestTimeoutDurationFromCodeAndKeys(t *testing.T) {
	fn := func(context.Context) (int, error) { return 0, nil }
	reg, _ := newRegistry(t, resilience.WithProperties(map[string]string{
		"defaults.timeout.duration":    "5s",
		"instances.C.timeout.duration": "2s",
	}))
	for id, want := range map[string]time.Duration{"A": 5 * time.Second, "B": time.Second, "C": 2 * time.Second} {
		d := map[string]time.Duration{"A": 0, "B": time.Second, "C": time.Second}[id]
		_, err := resilience.Wrap(reg, id, fn, resilience.Timeout(d))
		require.NoError(t, err, id)
		assert.Equal(t, want, lookup[*timeout.Timeout](t, reg, timeout.Layer, id).Config().Duration, id)
	}
	bare, _ := newRegistry(t)
	_, err := resilience.Wrap(bare, "A", fn, resilience.Timeout(0))
	requireCode(t, err, r4c.OutOfRange)
}

// SPEC RG-2: a shared instance is built once, by the first spec: its OnEvent listener
// hears the instance's events, those of calls through either function, and a later
// spec's listener is not called; the registry's listener hears them all.
func TestRG2_SharedInstanceKeepsTheFirstSpecsListener(t *testing.T) {
	var first, second, all int
	reg, _ := newRegistry(t, resilience.WithEventListener(func(policy.Event) { all++ }))
	fn := func(context.Context) (int, error) { return 0, nil }
	spec := func(count *int) resilience.Spec {
		return resilience.RateLimiter(ratelimit.Name("quota"), ratelimit.Permits(1), ratelimit.Period(time.Hour),
			ratelimit.OnEvent(func(policy.Event) { *count++ }))
	}
	a, err := resilience.Wrap(reg, "A", fn, spec(&first))
	require.NoError(t, err)
	b, err := resilience.Wrap(reg, "B", fn, spec(&second))
	require.NoError(t, err)
	_, err = a(context.Background())
	require.NoError(t, err)
	_, err = b(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	_, err = a(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 2, first, "both rejections")
	assert.Zero(t, second)
	assert.Equal(t, 2, all)
}
