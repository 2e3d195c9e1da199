package contract

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Attr is one configuration attribute of a policy whose settings are S: its camelCase
// name (the last segment of a configuration key) and how a string value sets it. Set
// reports syntax errors only; ranges are checked when the whole configuration is
// validated.
type Attr[S any] struct {
	Name string                         // camelCase, e.g. "maxWait"
	Set  func(s *S, value string) error // parses value into s; on bad syntax, an error and s unchanged

	// What the code generator needs (see Param): the option function, when it is not
	// the name with its first letter in upper case; the kind of value (set by the
	// constructors below); an enum's values; whether the value leads the spec function's
	// arguments; the value assumed for an attribute without a default.
	Option  string
	Value   ValueKind
	Enum    []Enum
	Leading bool
	Assume  string

	// differs reports whether two settings hold different values of the attribute; set
	// by the constructors below, nil for an attribute made otherwise.
	differs func(a, b *S) bool
}

// fieldDiffers returns an Attr's differs for the field that field points to.
func fieldDiffers[S any, V comparable](field func(*S) *V) func(a, b *S) bool {
	return func(a, b *S) bool { return *field(a) != *field(b) }
}

// ChangedAttrs returns the names of the attributes whose values differ between old and
// cur, sorted, for a ConfigChanged event; nil when none does. Every attribute of attrs
// must be made by the constructors of this file (DurationAttr, IntAttr, FloatAttr,
// BoolAttr, EnabledAttr), which know how to compare it; one made otherwise panics, as it
// is a programming error.
func ChangedAttrs[S any](attrs []Attr[S], old, cur *S) []string {
	var changed Changes
	for _, a := range attrs {
		if a.differs == nil {
			panic("contract: attribute " + a.Name + " cannot be compared")
		}
		changed.Add(a.differs(old, cur), a.Name)
	}
	return changed.Sorted()
}

// Attrs is a policy's table of attributes, named after its configuration segment.
type Attrs[S any] struct {
	Segment string    // the policy's configuration segment, e.g. "retry"
	List    []Attr[S] // the attributes, in the order Names reports them
}

// Names returns the attribute names, in table order.
func (a Attrs[S]) Names() []string {
	names := make([]string, len(a.List))
	for i, at := range a.List {
		names[i] = at.Name
	}
	return names
}

// Set sets attribute attr of s from value. An unknown attribute returns R4C-CFG-001; a
// value of the wrong syntax returns the attribute's code (R4C-ATR-001 for durations,
// R4C-ATR-005 for numbers, R4C-ATR-006 for booleans). The error's Key is
// "<segment>.<attr>".
func (a Attrs[S]) Set(s *S, attr, value string) error {
	key := a.Segment + "." + attr
	for _, at := range a.List {
		if at.Name == attr {
			if err := at.Set(s, value); err != nil {
				var ce *policy.ConfigError
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
	return &policy.ConfigError{Code: r4c.UnknownKey, Key: key,
		Reason: "unknown attribute; valid ones are " + strings.Join(a.Names(), ", ")}
}

// DurationAttr is a duration attribute parsed with policy.ParseDuration ("100ms", "1s");
// bad syntax is R4C-ATR-001.
func DurationAttr[S any](name string, field func(*S) *time.Duration) Attr[S] {
	return Attr[S]{Name: name, Value: DurationValue, Set: func(s *S, v string) error {
		d, err := policy.ParseDuration(v)
		if err != nil {
			return err
		}
		*field(s) = d
		return nil
	}, differs: fieldDiffers(field)}
}

// IntAttr is a decimal integer attribute; bad syntax is R4C-ATR-005.
func IntAttr[S any](name string, field func(*S) *int) Attr[S] {
	return Attr[S]{Name: name, Value: IntValue, Set: func(s *S, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if errors.Is(err, strconv.ErrRange) {
			return &policy.ConfigError{Code: r4c.OutOfRange, Value: v,
				Reason: fmt.Sprintf("out of range: a whole number is between %d and %d", math.MinInt, math.MaxInt)}
		}
		if err != nil {
			return &policy.ConfigError{Code: r4c.BadNumber, Value: v, Reason: "not a whole number"}
		}
		*field(s) = n
		return nil
	}, differs: fieldDiffers(field)}
}

// FloatAttr is a decimal number attribute; bad syntax (underscores and hexadecimal, which
// Go's literals allow, included, as for the integer attributes), NaN or ±Inf is
// R4C-ATR-005, a magnitude above 1e300 R4C-ATR-007.
func FloatAttr[S any](name string, field func(*S) *float64) Attr[S] {
	return Attr[S]{Name: name, Value: FloatValue, Set: func(s *S, v string) error {
		if strings.ContainsAny(v, "_xX") {
			return &policy.ConfigError{Code: r4c.BadNumber, Value: v, Reason: "not a decimal number"}
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if (err == nil || errors.Is(err, strconv.ErrRange)) && f == f && (f > 1e300 || f < -1e300) && !strings.Contains(strings.ToLower(v), "inf") {
			return &policy.ConfigError{Code: r4c.OutOfRange, Value: v, Reason: "out of range: a number's magnitude is at most 1e300"}
		}
		if err != nil || f != f || f > 1e300 || f < -1e300 {
			return &policy.ConfigError{Code: r4c.BadNumber, Value: v, Reason: "not a finite number"}
		}
		*field(s) = f
		return nil
	}, differs: fieldDiffers(field)}
}

// BoolAttr is a boolean attribute: "true" or "false" (any case); anything else is
// R4C-ATR-006.
func BoolAttr[S any](name string, field func(*S) *bool) Attr[S] {
	return Attr[S]{Name: name, Value: BoolValue, Set: func(s *S, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		*field(s) = b
		return nil
	}, differs: fieldDiffers(field)}
}

// EnabledAttr is the attribute "enabled", stored inverted in a Disabled field so that a
// configuration's zero value means enabled.
func EnabledAttr[S any](disabled func(*S) *bool) Attr[S] {
	return Attr[S]{Name: "enabled", Value: BoolValue, Set: func(s *S, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		*disabled(s) = !b
		return nil
	}, differs: fieldDiffers(disabled)}
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &policy.ConfigError{Code: r4c.BadBoolean, Value: v, Reason: `not a boolean: use "true" or "false"`}
}
