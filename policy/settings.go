package policy

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/clock"
)

// Common is what every policy's options set besides the policy's own attributes. Each
// policy package embeds it in its Settings, next to its Config.
type Common struct {
	// Name is the shared instance name: functions wrapped with the same name share one
	// instance (SPEC RG-1, RG-2). Empty: the instance id is the wrapped function's id.
	Name string
	// ConfigName selects the keys configs.<ConfigName>.<policy>.* (SPEC RG-4).
	ConfigName string
	// InstanceID is the id of an instance built directly with the package's New; a
	// registry sets it from Name or the wrapped function's id.
	InstanceID string
	// Clock is the time source; nil means clock.System(). A registry sets its own (SPEC RG-6).
	Clock clock.Clock
	// Listener receives the policy's events (SPEC RG-5); nil publishes nothing.
	Listener Listener
}

// ID returns the instance id: InstanceID if set, else Name, else fallback.
func (c *Common) ID(fallback string) string {
	switch {
	case c.InstanceID != "":
		return c.InstanceID
	case c.Name != "":
		return c.Name
	}
	return fallback
}

// ClockOrSystem returns Clock, or clock.System() when it is nil.
func (c *Common) ClockOrSystem() clock.Clock {
	if c.Clock == nil {
		return clock.System()
	}
	return c.Clock
}

// Attribute is one configuration attribute of a policy whose resolved configuration is C:
// its camelCase name (the last segment of a configuration key, SPEC RG-4) and how a string
// value sets it. Set reports syntax errors only; ranges are checked when the whole
// configuration is validated.
type Attribute[C any] struct {
	Name string
	Set  func(c *C, value string) error
}

// Attributes is a policy's table of attributes, named after its configuration segment
// (e.g. "rateLimiter").
type Attributes[C any] struct {
	Segment string
	List    []Attribute[C]
}

// Names returns the attribute names, in table order.
func (a Attributes[C]) Names() []string {
	names := make([]string, len(a.List))
	for i, at := range a.List {
		names[i] = at.Name
	}
	return names
}

// Set sets attribute attr of c from value. An unknown attribute returns R4C-CFG-001; a
// value of the wrong syntax returns the attribute's code (R4C-ATR-001 for durations,
// R4C-ATR-005 for numbers, R4C-ATR-006 for booleans). The error's Key is
// "<segment>.<attr>".
func (a Attributes[C]) Set(c *C, attr, value string) error {
	key := a.Segment + "." + attr
	for _, at := range a.List {
		if at.Name == attr {
			if err := at.Set(c, value); err != nil {
				var ce *ConfigError
				if errors.As(err, &ce) {
					keyed := *ce
					keyed.Key = key
					return &keyed
				}
				return err
			}
			return nil
		}
	}
	return &ConfigError{Code: CodeUnknownKey, Key: key,
		Reason: "unknown attribute; valid ones are " + strings.Join(a.Names(), ", ")}
}

// DurationAttr is an attribute parsed with ParseDuration into the field that field returns.
func DurationAttr[C any](name string, field func(*C) *time.Duration) Attribute[C] {
	return Attribute[C]{Name: name, Set: func(c *C, v string) error {
		d, err := ParseDuration(v)
		if err != nil {
			return err
		}
		*field(c) = d
		return nil
	}}
}

// IntAttr is a decimal integer attribute; bad syntax is R4C-ATR-005.
func IntAttr[C any](name string, field func(*C) *int) Attribute[C] {
	return Attribute[C]{Name: name, Set: func(c *C, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return &ConfigError{Code: CodeBadNumber, Value: v, Reason: "not a whole number"}
		}
		*field(c) = n
		return nil
	}}
}

// FloatAttr is a decimal number attribute; bad syntax (or NaN, ±Inf) is R4C-ATR-005.
func FloatAttr[C any](name string, field func(*C) *float64) Attribute[C] {
	return Attribute[C]{Name: name, Set: func(c *C, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f != f || f > 1e300 || f < -1e300 {
			return &ConfigError{Code: CodeBadNumber, Value: v, Reason: "not a finite number"}
		}
		*field(c) = f
		return nil
	}}
}

// BoolAttr is a boolean attribute: "true" or "false" (any case); anything else is
// R4C-ATR-006.
func BoolAttr[C any](name string, field func(*C) *bool) Attribute[C] {
	return Attribute[C]{Name: name, Set: func(c *C, v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			*field(c) = true
		case "false":
			*field(c) = false
		default:
			return &ConfigError{Code: CodeBadBoolean, Value: v, Reason: `not a boolean: use "true" or "false"`}
		}
		return nil
	}}
}
