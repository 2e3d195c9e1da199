package r4c_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

func TestChecks_PassOrFailWithTheirWording(t *testing.T) {
	ce := func(code, key, value, reason string) error {
		return &policy.ConfigError{Code: code, Key: key, Value: value, Reason: reason}
	}
	for _, c := range []struct {
		name      string
		got, want error
	}{
		{"at least", r4c.AtLeast("p.count", 0, 1, ""), ce(r4c.OutOfRange, "p.count", "0", "count must be at least 1")},
		{"at least, why", r4c.AtLeast("p.n", -2, 1, "it counts"), ce(r4c.OutOfRange, "p.n", "-2", "n must be at least 1 (it counts)")},
		{"at least, met", r4c.AtLeast("p.n", 1, 1, ""), nil},
		{"not negative", r4c.NotNegative("p.wait", -time.Second, ""), ce(r4c.NegativeDuration, "p.wait", "-1s", "wait must not be negative")},
		{"not negative, zero", r4c.NotNegative("p.wait", 0, "x"), nil},
		{"positive, negative", r4c.Positive("p.d", -time.Second, "why"), ce(r4c.NegativeDuration, "p.d", "-1s", "d must not be negative")},
		{"positive, zero", r4c.Positive("p.d", 0, "why"), ce(r4c.OutOfRange, "p.d", "0s", "d must be positive (why)")},
		{"positive, met", r4c.Positive("p.d", 1, ""), nil},
		{"finite", r4c.FiniteAtLeast("p.f", 0.5, 1, ""), ce(r4c.OutOfRange, "p.f", "0.5", "f must be a finite number of at least 1")},
		{"finite, inf", r4c.FiniteAtLeast("p.f", math.Inf(1), 0, "w"), ce(r4c.OutOfRange, "p.f", "+Inf", "f must be a finite number of at least 0 (w)")},
		{"finite, NaN", r4c.FiniteAtLeast("p.f", math.NaN(), 0, ""), ce(r4c.OutOfRange, "p.f", "NaN", "f must be a finite number of at least 0")},
		{"finite, met", r4c.FiniteAtLeast("p.f", 1, 1, ""), nil},
		{"between", r4c.Between("p.j", 1.5, 0, 1), ce(r4c.OutOfRange, "p.j", "1.5", "j must be between 0 and 1")},
		{"between, NaN", r4c.Between("p.j", math.NaN(), 0, 100), ce(r4c.OutOfRange, "p.j", "NaN", "j must be between 0 and 100")},
		{"between, met", r4c.Between("p.j", 1, 0, 1), nil},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}
}

func TestFirst_ReturnsTheFirstError(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	assert.Equal(t, a, r4c.First(nil, a, b))
	assert.NoError(t, r4c.First(nil, nil))
	assert.NoError(t, r4c.First())
}
