package policy_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

func TestParseDuration_Accepts(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"100ms":    100 * time.Millisecond,
		"1s":       time.Second,
		" 2m ":     2 * time.Minute,
		"\t30s\n":  30 * time.Second,
		"0":        0,
		"-1s":      -time.Second,
		"1.5h":     90 * time.Minute,
		"1m30s":    90 * time.Second,
		"250us":    250 * time.Microsecond,
		"7ns":      7,
		"2562047h": 2562047 * time.Hour,
	} {
		got, err := policy.ParseDuration(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
}

// SPEC error codes: bad duration syntax is R4C-ATR-001.
func TestParseDuration_RejectsWithATR001(t *testing.T) {
	for _, in := range []string{
		"", "   ", "10 parsecs", "1", "abc", "300000000h", "1s2", "ms", "--1s", "1 s", "1d",
	} {
		d, err := policy.ParseDuration(in)
		require.Error(t, err, "%q", in)
		assert.Equal(t, time.Duration(0), d)

		var ce *policy.ConfigError
		require.True(t, errors.As(err, &ce), "%q: a *ConfigError", in)
		assert.Equal(t, "R4C-ATR-001", ce.Code, "%q", in)
		assert.Equal(t, r4c.BadDuration, ce.Code)
		assert.Equal(t, in, ce.Value, "the value as written")
		assert.True(t, strings.HasPrefix(err.Error(), "R4C-ATR-001: "), "%q: message %q", in, err.Error())
		assert.Equal(t, "R4C-ATR-001", r4c.CodeOf(err))
	}
}

// A value of good syntax beyond the range of time.Duration says it is out of range and
// gives the bound; bad syntax still says so (fault: "2562048h" was "not a duration").
func TestParseDuration_OutOfRangeSaysSo(t *testing.T) {
	for in, bound := range map[string]string{
		"2562048h":                  "at most 2562047h47m16.854775807s (about 292 years)",
		" +2562048h ":               "at most 2562047h47m16.854775807s",
		"300000000h":                "at most 2562047h47m16.854775807s",
		"9223372036854775808ns":     "at most 2562047h47m16.854775807s",
		"99999999999999999999s":     "at most 2562047h47m16.854775807s",
		"2562047h47m16.854775808s":  "at most 2562047h47m16.854775807s",
		"1h2562047h":                "at most 2562047h47m16.854775807s",
		"-2562048h":                 "at least -2562047h47m16.854775808s (about -292 years)",
		"-2562047h47m16.854775809s": "at least -2562047h47m16.854775808s",
	} {
		_, err := policy.ParseDuration(in)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%q", in)
		assert.Equal(t, r4c.BadDuration, ce.Code, "%q", in)
		assert.Equal(t, in, ce.Value)
		assert.Equal(t, "out of range: a duration is "+bound, ce.Reason[:len("out of range: a duration is ")+len(bound)], "%q", in)
	}
	for _, in := range []string{"2562047h47m16.854775807s", "-2562047h47m16.854775808s", "9223372036854775807ns"} {
		_, err := policy.ParseDuration(in)
		require.NoError(t, err, "%q: the bounds are in range", in)
	}
	for _, in := range []string{"", "1", "-+1s", "+-1s", ".s", "1x", "1s2", "1.2.3s", "00", "h", "--0", "0h0", "1e3s", "99999999999999999999"} {
		_, err := policy.ParseDuration(in)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%q", in)
		assert.True(t, strings.HasPrefix(ce.Reason, "not a duration: "), "%q: %s", in, ce.Reason)
	}
}

// durationSyntax is the grammar of time.ParseDuration, whatever the magnitude.
var durationSyntax = regexp.MustCompile(`^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`)

func TestParseDuration_MessageNamesTheValue(t *testing.T) {
	_, err := policy.ParseDuration("10 parsecs")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"10 parsecs"`)
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{
		"100ms", "1s", " 2m ", "0", "-1s", "1.5h", "1m30s", "", "10 parsecs", "1", "abc",
		"300000000h", "2562047h47m16.854775807s", "-2562047h47m16.854775808s", "+5us", ".5s",
		"1µs", "1μs", "0.000000001s", "9223372036854775807ns", "9223372036854775808ns", "2562048h", "-2562048h",
		"99999999999999999999s", "-+1s", ".s", "00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := policy.ParseDuration(s)
		if err != nil {
			if code := r4c.CodeOf(err); code != r4c.BadDuration {
				t.Fatalf("ParseDuration(%q): code %q, want %s (err %v)", s, code, r4c.BadDuration, err)
			}
			if d != 0 {
				t.Fatalf("ParseDuration(%q) = %v with an error", s, d)
			}
			var ce *policy.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseDuration(%q): %v is not a *ConfigError", s, err)
			}
			if outOfRange := strings.HasPrefix(ce.Reason, "out of range"); outOfRange != durationSyntax.MatchString(strings.TrimSpace(s)) {
				t.Fatalf("ParseDuration(%q): %q; syntax valid: %v", s, ce.Reason, !outOfRange)
			}
			return
		}
		back, err := policy.ParseDuration(d.String())
		if err != nil {
			t.Fatalf("ParseDuration(%q) = %v, whose String %q does not parse: %v", s, d, d.String(), err)
		}
		if back != d {
			t.Fatalf("ParseDuration(%q) = %v; round trip gives %v", s, d, back)
		}
	})
}
