package r4c_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

func TestErrorf(t *testing.T) {
	err := fmt.Errorf("wrap: %w", r4c.Errorf(r4c.BadNumber, "retry.maxAttempts", "x", "not a %s", "number"))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, policy.ConfigError{Code: "R4C-ATR-005", Key: "retry.maxAttempts", Value: "x", Reason: "not a number"}, *ce)
	assert.Equal(t, `R4C-ATR-005: retry.maxAttempts = "x": not a number`, ce.Error())
}

func TestCodeOf(t *testing.T) {
	assert.Equal(t, "R4C-REG-009", r4c.CodeOf(&policy.ConfigError{Code: r4c.UnknownInstance}))
	assert.Equal(t, "R4C-CFG-001", r4c.CodeOf(fmt.Errorf("a: %w", fmt.Errorf("b: %w", &policy.ConfigError{Code: r4c.UnknownKey}))))
	assert.Equal(t, "", r4c.CodeOf(errors.New("R4C-ATR-001: not a ConfigError")))
	assert.Equal(t, "", r4c.CodeOf(nil))
}

// SPEC error codes: the constants have the values of the table.
func TestCodes(t *testing.T) {
	for got, want := range map[string]string{
		r4c.BadDuration:     "R4C-ATR-001",
		r4c.ZeroPeriod:      "R4C-ATR-002",
		r4c.BadPermits:      "R4C-ATR-003",
		r4c.BadBoolean:      "R4C-ATR-006",
		r4c.PeriodTooShort:  "R4C-REG-001",
		r4c.UnknownConfig:   "R4C-REG-004",
		r4c.Conflict:        "R4C-REG-008",
		r4c.UnknownInstance: "R4C-REG-009",
		r4c.UnknownKey:      "R4C-CFG-001",
		r4c.BadSource:       "R4C-CFG-002",
		r4c.DuplicateKey:    "R4C-CFG-003",
		r4c.LockedOverride:  "R4C-CFG-014",
	} {
		assert.Equal(t, want, got)
	}
}
