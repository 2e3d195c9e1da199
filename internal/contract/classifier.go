package contract

import (
	"errors"
	"reflect"
	"slices"
)

// Classifier decides whether a call's outcome counts for a policy: whether retry retries
// it, the circuit breaker records it as a failure, the fallback handles it. One rule for
// every policy:
//
//   - an error matching Exclude (errors.Is) never counts, whatever else says;
//   - otherwise an error counts when Include is empty or it matches Include;
//   - otherwise the outcome counts when the result predicate returns true for it, which
//     lets a result with a nil error count (an HTTP 503 returned as a value).
//
// Options append to Include and Exclude: RetryOn(a) followed by RetryOn(b) counts both.
type Classifier struct {
	Include []error    // errors that count; empty: every error
	Exclude []error    // errors that never count, whatever else says
	If      *Predicate // the result predicate; nil: none
}

// Predicate is a result predicate func(T, error) bool, boxed once by the option that set
// it: two settings share a predicate only when they were given the same option value.
type Predicate struct {
	fn  any
	typ reflect.Type
}

// NewPredicate boxes fn, a predicate on results of type T. A nil fn gives nil.
func NewPredicate[T any](fn func(T, error) bool) *Predicate {
	if fn == nil {
		return nil
	}
	return &Predicate{fn: fn, typ: reflect.TypeFor[T]()}
}

// ResultType returns the T of the predicate, or nil for a nil predicate.
func (p *Predicate) ResultType() reflect.Type {
	if p == nil {
		return nil
	}
	return p.typ
}

// For returns the predicate as a func(T, error) bool, or nil when p is nil or is for
// another result type (a registry refuses that combination when it wraps a function).
func For[T any](p *Predicate) func(T, error) bool {
	if p == nil {
		return nil
	}
	fn, _ := p.fn.(func(T, error) bool)
	return fn
}

// Excluded reports whether err matches Exclude.
func (c *Classifier) Excluded(err error) bool {
	return err != nil && Matches(err, c.Exclude)
}

// Error reports whether the error err counts, by the lists alone: not nil, not excluded,
// and included.
func (c *Classifier) Error(err error) bool {
	if err == nil || Matches(err, c.Exclude) {
		return false
	}
	return len(c.Include) == 0 || Matches(err, c.Include)
}

// Counts reports whether the outcome (v, err) counts: by the lists, or else by pred (the
// classifier's predicate for T, from For; nil for none).
func Counts[T any](c *Classifier, pred func(T, error) bool, v T, err error) bool {
	if c.Error(err) {
		return true
	}
	return pred != nil && !c.Excluded(err) && pred(v, err)
}

// Own gives each list a backing array of its own (a nil list stays nil), so that a
// configuration a policy keeps, or hands out, shares none with its caller's: changing the
// caller's slice, or the one Config returned, cannot change how the policy classifies.
func Own(lists ...*[]error) {
	for _, l := range lists {
		*l = slices.Clone(*l)
	}
}

// Append returns list with the non-nil errors of errs added, never writing into list's
// backing array: settings are copied by value, and two copies must not share additions.
func Append(list []error, errs []error) []error {
	list = slices.Clip(list)
	for _, e := range errs {
		if e != nil {
			list = append(list, e)
		}
	}
	return list
}

// Matches reports whether err matches one of the errors of list, as errors.Is finds them.
func Matches(err error, list []error) bool {
	for _, e := range list {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Shared is what two functions that share an instance by name must agree on, for a
// policy with a result predicate: its configuration and its predicate.
type Shared[C any] struct {
	Config C          `same:"-"`                // named by its fields in a Difference
	If     *Predicate `same:"result predicate"` // named so in a Difference
}
