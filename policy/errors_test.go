package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

func TestConfigError_ErrorFormats(t *testing.T) {
	for _, tc := range []struct {
		err  policy.ConfigError
		want string
	}{
		{policy.ConfigError{Code: "R4C-ATR-003", Key: "rateLimiter.permits", Value: "0", Reason: "permits must be at least 1"},
			`R4C-ATR-003: rateLimiter.permits = "0": permits must be at least 1`},
		{policy.ConfigError{Code: "R4C-CFG-001", Key: "rateLimiter.permit", Reason: "unknown attribute"},
			`R4C-CFG-001: rateLimiter.permit: unknown attribute`},
		{policy.ConfigError{Code: "R4C-ATR-001", Value: "1 parsec", Reason: "not a duration"},
			`R4C-ATR-001: "1 parsec": not a duration`},
		{policy.ConfigError{Code: "R4C-REG-004", Reason: "no configuration named x"},
			`R4C-REG-004: no configuration named x`},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}

// A long key or value is shown shortened, with its length; the fields keep it whole
// (fault: a 20 KB key was repeated whole in the message).
func TestConfigError_LongKeyAndValueAreShortened(t *testing.T) {
	key := "instances." + strings.Repeat("x", 20_000) + ".rateLimiter.permit"
	value := strings.Repeat("é", 1000) // two bytes each: cut between characters
	err := &policy.ConfigError{Code: r4c.UnknownKey, Key: key, Value: value, Reason: "unknown"}
	msg := err.Error()
	assert.Less(t, len(msg), 400)
	assert.True(t, utf8.ValidString(msg))
	assert.Regexp(t, `^R4C-CFG-001: instances\.x+…x+\.rateLimiter\.permit \(20029 bytes\) = "é+…é+" \(2000 bytes\): unknown$`, msg)
	assert.Len(t, err.Key, 20_029)

	only := (&policy.ConfigError{Code: r4c.BadDuration, Value: strings.Repeat("9", 500) + "s", Reason: "r"}).Error()
	assert.Regexp(t, `^R4C-ATR-001: "9{100}…9{39}s" \(501 bytes\): r$`, only)

	exact := strings.Repeat("k", 160) // up to 160 bytes, whole
	assert.Equal(t, "R4C-CFG-001: "+exact+": r", (&policy.ConfigError{Code: r4c.UnknownKey, Key: exact, Reason: "r"}).Error())
}

func TestConfigError_IsByCode(t *testing.T) {
	err := fmt.Errorf("building: %w", &policy.ConfigError{Code: r4c.BadPermits, Key: "rateLimiter.permits", Value: "0", Reason: "at least 1"})

	assert.ErrorIs(t, err, &policy.ConfigError{Code: r4c.BadPermits})
	assert.NotErrorIs(t, err, &policy.ConfigError{Code: r4c.ZeroPeriod})
	// A target with a key or a reason is a specific error, not a code to match.
	assert.NotErrorIs(t, err, &policy.ConfigError{Code: r4c.BadPermits, Key: "retry.maxAttempts"})
	assert.NotErrorIs(t, err, &policy.ConfigError{Code: r4c.BadPermits, Reason: "other"})
	assert.NotErrorIs(t, err, errors.New(r4c.BadPermits))
	var nilTarget *policy.ConfigError
	assert.NotPanics(t, func() { assert.NotErrorIs(t, err, nilTarget) })
}
