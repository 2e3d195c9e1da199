package chaos

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the chaos policy's layer, the innermost of the built-in layers in the default
// order (inside the adaptive limit, right before the function: it stands for the
// dependency misbehaving, so that every other layer sees what it injects), and the
// segment of its configuration keys ("chaos" in defaults.chaos.…).
const Layer policy.Layer = "chaos"

// codeBoth, R4C-CHS-001, refuses a chaos policy given both an error and a result to
// inject: an injected call ends with one of them only.
const codeBoth = "R4C-CHS-001"

// Config is a chaos policy's resolved configuration, as Chaos.Config reports it: the
// options and configuration keys set it.
//
// A reload of a registry's configuration changes a running chaos policy: Enabled, Rate
// and Latency all change live, for the calls that arrive after the change (a call already
// waiting out an injected latency keeps it). What is injected besides the latency (Error,
// Result, Behavior) and the random source (Seed) are set in code only, and are fixed when
// the policy is built. An invalid configuration is refused with the error New would
// return and changes nothing. A change publishes a ConfigChanged event naming the
// attributes that changed ("enabled", "latency", "rate"); a configuration equal to the
// one in force publishes nothing.
//
// The unexported fields hold what code sets (the error, result, behaviour and seed), so
// that two functions sharing one instance by name must agree on them: an error is the
// same only when it is the same value, a result or a behaviour only when it comes from
// the same option value.
type Config struct {
	// Enabled is whether the policy injects anything. Default false: a chaos policy is
	// never on unless configured, even in a composition. The configuration key is
	// chaos.enabled; a reload switches it on and off.
	Enabled bool
	// Rate is the probability, from 0 to 1, that an enabled policy injects into a call:
	// each call draws once. Default 0.001 (one call in a thousand). The configuration
	// key is chaos.rate; a reload changes it.
	Rate float64
	// Latency is how long an injected call waits, on the policy's clock, before it goes
	// on (0: no latency injected). At least 0. Default 0. The configuration key is
	// chaos.latency; a reload changes it.
	Latency time.Duration

	err      error     // the error an injected call fails with; nil: none
	result   *outcome  // the result an injected call returns; nil: none
	behavior *behavior // what an injected call runs first; nil: nothing
	seeded   bool      // the draws come from a sequence started at seed
	seed     uint64
}

// outcome is Result's function, boxed once by the option, with the result type it
// returns.
type outcome struct {
	fn  any // func(context.Context) (T, error)
	typ reflect.Type
}

// behavior is Behavior's function, boxed once by the option.
type behavior struct {
	fn func(ctx context.Context) error
}

// defaultRate is the built-in Rate.
const defaultRate = 0.001

// defaultConfig returns the built-in defaults: disabled, Rate 0.001, no latency.
func defaultConfig() Config { return Config{Rate: defaultRate} }

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if
// Rate is outside [0, 1] (or not a number), R4C-ATR-004 if Latency is negative,
// R4C-CHS-001 if both an error and a result are to be injected. It checks all, enabled or
// not.
func (c Config) validate() error {
	return r4c.First(
		r4c.Between("chaos.rate", c.Rate, 0, 1),
		r4c.NotNegative("chaos.latency", c.Latency, ""),
		c.checkBoth(),
	)
}

// checkBoth returns R4C-CHS-001 when both an error and a result are set.
func (c Config) checkBoth() error {
	if c.err == nil || c.result == nil {
		return nil
	}
	// fmt, not c.err.Error(): a nil pointer of an error type is shown as <nil>, not a panic.
	return r4c.Errorf(codeBoth, "chaos", fmt.Sprint(c.err),
		"both an error and a result to inject: an injected call ends with one of them; give one, or a Behavior that chooses")
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	contract.Common
}

func defaults() settings { return settings{Config: defaultConfig()} }

// attrs are the configuration attributes, which also name what a reload changes.
var attrs = []contract.Attr[settings]{
	contract.BoolAttr("enabled", func(s *settings) *bool { return &s.Enabled }),
	contract.FloatAttr("rate", func(s *settings) *float64 { return &s.Rate }),
	contract.DurationAttr("latency", func(s *settings) *time.Duration { return &s.Latency }),
}

// descriptor is how a registry sees chaos policies.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return s.Config },
	State:    contract.Typed((*Chaos).Snapshot),
	Result: func(s *settings) reflect.Type {
		if s.result == nil {
			return nil
		}
		return s.result.typ
	},
	Metrics: metrics,

	Compose: contract.Composition{Rank: 90, Live: contract.Live((*Chaos).checkReconfigure, (*Chaos).reconfigure)},
}, build, (*settings).validate,
	func(c *Chaos) string { return c.events.ID },
	(*Chaos).Config)

func init() { contract.Register(descriptor) }

// Option configures a chaos policy.
type Option func(*settings)

// Enabled switches injection on or off. Default false: a chaos policy injects nothing
// unless this option or the key chaos.enabled turns it on.
func Enabled(on bool) Option { return func(s *settings) { s.Enabled = on } }

// Rate sets the probability, from 0 to 1, that an enabled policy injects into a call.
// Default 0.001. Outside [0, 1], or not a number, fails with R4C-ATR-007.
func Rate(p float64) Option { return func(s *settings) { s.Rate = p } }

// Latency makes an injected call wait d, on the policy's clock, before it goes on; the
// wait ends early, failing the call with its context's error, when the context ends.
// Default 0: none. Negative fails with R4C-ATR-004.
func Latency(d time.Duration) Option { return func(s *settings) { s.Latency = d } }

// Error makes an injected call fail with err, as is, without calling the function.
// Default none: without Error, Result, Latency or Behavior an injected call fails with
// ErrInjected. With Result too, building fails with R4C-CHS-001. A nil err sets none.
func Error(err error) Option { return func(s *settings) { s.err = err } }

// Result makes an injected call return what fn returns, without calling the function:
// a value (or an error) as the dependency might send it. T must be the wrapped
// function's result type: otherwise a registry refuses the wrap with R4C-REG-010, and a
// policy of NewPolicy for another type fails each injected call with that
// *policy.ConfigError. Default none. With Error too, building fails with R4C-CHS-001. A
// nil fn sets none. fn must be safe for concurrent use.
func Result[T any](fn func(ctx context.Context) (T, error)) Option {
	var o *outcome
	if fn != nil {
		o = &outcome{fn: fn, typ: reflect.TypeFor[T]()}
	}
	return func(s *settings) { s.result = o }
}

// Behavior makes an injected call run fn first, after the latency if there is one: an
// error from fn fails the call with it, as is, and the function is not called; nil lets
// the call go on (to Error's error, Result's result, or the function). Default none. A
// nil fn sets none. fn runs on the caller's goroutine for a synchronous call, on the
// goroutine that ends the latency (a clock timer) or the caller's for one that returns a
// future; it must honour its context and be safe for concurrent use.
func Behavior(fn func(ctx context.Context) error) Option {
	var b *behavior
	if fn != nil {
		b = &behavior{fn: fn}
	}
	return func(s *settings) { s.behavior = b }
}

// Seed makes the decisions reproducible: the policy draws from a SplitMix64 sequence
// started at n instead of math/rand/v2's global source. The calls draw in the order they
// reach the policy, so a run of calls made one after another injects into the same calls
// every time. Default none: unpredictable draws.
func Seed(n uint64) Option { return func(s *settings) { s.seeded, s.seed = true, n } }

// Name shares one chaos instance, and its counts, among every function wrapped with this
// name; the name is the instance id, also of an instance built with New. Default none:
// each wrapped function has its own, whose id is the function's id (an instance built
// with New has no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.chaos.*, which take precedence
// over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source, which times the injected latency: with a manual clock
// a synchronous call's latency advances the clock (its Sleep), and an asynchronous call's
// ends when the test advances it. Default clock.System(). A registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the policy's events: EventInjected, and ConfigChanged when
// a reload changes its configuration. Default none: nothing is published. A registry
// adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
