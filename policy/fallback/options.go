package fallback

import (
	"reflect"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the fallback's layer, outermost in every order, and the segment of its configuration keys
// ("fallback" in defaults.fallback.…).
const Layer policy.Layer = "fallback"

// config is a fallback's resolved configuration; its zero value handles every error.
// Identical option sets give configurations equal under reflect.DeepEqual (the error
// lists hold the same sentinel values), as a shared name compares them. The fallback
// function itself is not part of it: it is given to New.
type config struct {
	// HandleOn lists the errors that reach the fallback, matched with errors.Is. Default
	// empty: every error. Set in code only: no configuration key sets it.
	HandleOn []error
	// IgnoreOn lists errors that pass through untouched, matched with errors.Is; it wins
	// over HandleOn and HandleIf. Default empty. Set in code only.
	IgnoreOn []error
	// Disabled true lets every result through untouched. Default false: the zero value
	// is enabled. The configuration key is fallback.enabled.
	Disabled bool
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	config
	contract.Common
	handleIf *contract.Predicate // HandleIf's predicate; nil: none
}

// defaults returns the built-in defaults: every error handled, enabled. Every
// configuration is valid (a nil fallback function is reported by New, with R4C-REG-010).
func defaults() settings { return settings{} }

// descriptor is how a registry sees fallbacks. A fallback is built for each function
// it decorates, with that function's result type, so the registry builds it itself.
var descriptor = &contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    []contract.Attr[settings]{contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled })},
	Defaults: defaults,
	Common:   func(s *settings) *contract.Common { return &s.Common },
	Config:   func(s *settings) any { return s.config },
	Result:   func(s *settings) reflect.Type { return s.handleIf.ResultType() },

	Compose: contract.Composition{Rank: 10, Outermost: true},
	CodeAttrs: []contract.Param{
		{Name: "method", Value: contract.MethodValue, Leading: true},
		{Name: "handleOn", Option: "HandleOn", Value: contract.ErrorsValue},
		{Name: "ignoreOn", Option: "IgnoreOn", Value: contract.ErrorsValue},
	},
}

func init() { contract.Register(descriptor) }

// Option configures a fallback. Options do not depend on the fallback's result type.
type Option func(*settings)

// Enabled false lets every result through untouched, the fallback never called. Default
// true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// HandleOn adds errors that reach the fallback, matched with errors.Is. Default empty:
// every error. Each call adds to the list; IgnoreOn wins over it.
func HandleOn(errs ...error) Option {
	return func(s *settings) { s.HandleOn = contract.Append(s.HandleOn, errs) }
}

// IgnoreOn adds errors that pass through untouched, matched with errors.Is. Default
// empty. It wins over HandleOn and HandleIf. Each call adds to the list.
// IgnoreOn(context.Canceled) returns a caller's cancellation as it is instead of a
// fallback result.
func IgnoreOn(errs ...error) Option {
	return func(s *settings) { s.IgnoreOn = contract.Append(s.IgnoreOn, errs) }
}

// HandleIf sends to the fallback the outcomes for which pred returns true, in addition to
// the errors the lists send: e.g. a response with status 503 returned with a nil error,
// which the fallback function then receives as a nil error. T must be the fallback's
// result type; New with another type fails with R4C-REG-010. Default none. A later call
// replaces the predicate; a nil pred removes it. pred must be quick, safe for concurrent
// use, and must not panic.
func HandleIf[T any](pred func(v T, err error) bool) Option {
	p := contract.NewPredicate(pred)
	return func(s *settings) { s.handleIf = p }
}

// Name gives the fallbacks of every function wrapped with this name one instance id, the
// name, and so one set of configuration keys (instances.<name>.fallback.*). Each
// function still gets a fallback of its own, typed by its result. It is also the id of a
// fallback built with New. Default none: the id is the wrapped function's id (a fallback
// built with New has no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.fallback.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source of event times. Default clock.System(). A registry sets
// its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the fallback's EventApplied events. Default none:
// nothing is published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
