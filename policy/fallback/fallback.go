// Package fallback is resilience4go's fallback policy: when a call fails with an error the
// fallback handles, a function of the caller's context and that error provides the
// result instead.
//
// The fallback is the outermost layer, whatever order a composition names: it sees the
// error that is left after every other policy has done its work, retries included. Which
// errors it handles:
//   - an error matching IgnoreOn (errors.Is) passes through untouched;
//   - otherwise, with HandleOn set, only errors matching it are handled; without it,
//     every error is, the context's own errors (context.Canceled,
//     context.DeadlineExceeded) included: add them to IgnoreOn to let them through;
//   - an outcome the lists do not handle, a result with a nil error included, is handled
//     when HandleIf's predicate returns true for it (IgnoreOn still wins).
//
// A handled error is replaced by whatever the fallback function returns, value and
// error, and an EventApplied event carrying the original error is published; a
// recorder (a registry's observer) gets it with the context of the call. A fallback records no outcome
// of its own (see observe.Outcome): its EventApplied event says when it replaced an
// error. A successful call is returned as it is: it publishes nothing and allocates
// nothing.
//
// A call whose context is nil or already done when it arrives runs neither the function
// nor the fallback function and publishes nothing: it returns the context's error as is
// (policy.ErrNilContext for a nil context), or, async, a future failed with it.
//
// A Fallback is typed by the result T of the calls it decorates: a registry refuses a
// fallback that does not fit a function with R4C-REG-010. It has no rejection error of
// its own. It is safe for concurrent use (the fallback function must be too).
package fallback

import (
	"context"
	"reflect"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Fallback replaces the errors it handles with the result of its function, for calls
// returning T. Build it with New and decorate calls with NewPolicy (a registry builds
// its own for resilience.Fallback). It is safe for concurrent use; its configuration is fixed when it is
// built.
type Fallback[T any] struct {
	fn     func(ctx context.Context, err error) (T, error)
	cfg    config
	cls    contract.Classifier
	pred   func(T, error) bool // HandleIf's predicate; nil: none
	events contract.Events
}

// New builds a fallback around fn, over the defaults (every error handled). fn receives
// the caller's context and the error it replaces. A nil fn, or a HandleIf predicate for
// another result type than T, returns a *policy.ConfigError with code R4C-REG-010. The
// instance id, which names it in its events, is the Name, else "" (no id: its errors and events name no instance).
func New[T any](fn func(ctx context.Context, err error) (T, error), opts ...Option) (*Fallback[T], error) {
	s := defaults()
	contract.Apply(&s, opts)
	return build(fn, s)
}

// build builds a fallback from resolved settings; see New for the errors.
func build[T any](fn func(ctx context.Context, err error) (T, error), s settings) (*Fallback[T], error) {
	if fn == nil {
		return nil, r4c.Errorf(r4c.BadSpec, string(Layer), "",
			"the fallback function is nil: give a func(context.Context, error) (%v, error)", reflect.TypeFor[T]())
	}
	if t := s.handleIf.ResultType(); t != nil && t != reflect.TypeFor[T]() {
		return nil, r4c.Errorf(r4c.BadSpec, string(Layer), "",
			"HandleIf's predicate takes %v but the fallback returns %v", t, reflect.TypeFor[T]())
	}
	contract.Own(&s.HandleOn, &s.IgnoreOn)
	return &Fallback[T]{
		fn:     fn,
		cfg:    s.config,
		cls:    contract.Classifier{Include: s.HandleOn, Exclude: s.IgnoreOn, If: s.handleIf},
		pred:   contract.For[T](s.handleIf),
		events: s.EventsOf(Layer, s.ID("")),
	}, nil
}

// handles reports whether the outcome (v, err) reaches the fallback.
func (f *Fallback[T]) handles(v T, err error) bool { return contract.Counts(&f.cls, f.pred, v, err) }

// apply publishes EventApplied, with ctx, the context of the call whose error err it
// replaces, and returns the fallback's result for err.
func (f *Fallback[T]) apply(ctx context.Context, err error) (T, error) {
	f.events.PublishCtx(ctx, policy.Event{Kind: EventApplied, Err: err})
	return f.fn(ctx, err)
}
