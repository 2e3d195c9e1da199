package hedge

import (
	"math"
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the hedge's layer, in the retry's place in the default order; a composition has one or the other, and the segment of its configuration keys
// ("hedge" in defaults.hedge.…).
const Layer policy.Layer = "hedge"

// The codes of the errors that refuse a hedge in a composition, in its
// *policy.ConfigError's Code.
const (
	// codeSync, R4C-HDG-001, refuses a hedge in a composition of synchronous calls: it
	// guards calls that return a future only.
	codeSync = "R4C-HDG-001"
	// codeWithRetry, R4C-HDG-002, refuses a composition with a hedge and a retry: the
	// hedge takes the retry's place.
	codeWithRetry = "R4C-HDG-002"
)

// The bounds of MaxAttempts.
const (
	minAttempts = 2
	maxAttempts = 10
)

// config is a hedge's resolved configuration: the options and configuration keys set it,
// once, when the hedge is built; Hedge.Snapshot reports it. Identical option sets give
// configurations equal under reflect.DeepEqual (the error lists hold the same sentinel
// values).
type config struct {
	// Delay is how long the hedge waits for a result after the last attempt started
	// before it starts another, on the hedge's clock; 0 starts the attempts one after
	// another at once. At least 0. Default 1s.
	Delay time.Duration
	// MaxAttempts is the total number of attempts of one call, the first included. From
	// 2 to 10. Default 2: the call and one hedge.
	MaxAttempts int
	// HedgeOn lists the errors that start the next attempt at once when an attempt fails
	// with them, matched with errors.Is (the option On). Default empty: every error does. An error outside
	// a non-empty list is a result but not a reason to hedge. Set in code only: no
	// configuration key sets it.
	HedgeOn []error
	// AbortOn lists errors that end the call at once when an attempt fails with them,
	// matched with errors.Is: the call fails with that error and every other attempt is
	// canceled. It wins over HedgeOn. Default empty. Set in code only.
	AbortOn []error
	// BudgetPercent bounds the hedges started in the budget window to this percentage of
	// the calls that arrived in it (see BudgetMinPerSecond for the floor). From 0 to 100.
	// Default 10. It stands for the decimal written, and the budget compares the hedges
	// with it exactly: 2.2 allows 33 hedges for 1,500 calls, not one more for the float64
	// rounding of 2.2 × 1500 / 100.
	BudgetPercent float64
	// BudgetWindow is the span over which the budget counts calls and hedges, on the
	// hedge's clock, in 20 buckets of BudgetWindow/20 each. More than 0. Default 10s.
	BudgetWindow time.Duration
	// BudgetMinPerSecond is the budget's floor, in hedges per second: whatever
	// BudgetPercent allows, BudgetMinPerSecond × BudgetWindow (in seconds) hedges are
	// allowed per window, so that a quiet service still hedges. At least 0 and finite.
	// Default 1. Exact as BudgetPercent is: 0.14 over a 50s window allows 7 hedges.
	BudgetMinPerSecond float64
	// NoBudget true lets every call start its hedges, up to MaxAttempts, with no budget.
	// Default false: the zero value has the budget on. The configuration key is
	// hedge.budgetEnabled, its inverse.
	NoBudget bool
	// Disabled true makes every call a single attempt, with no hedge and no event.
	// Default false: the zero value is enabled. The configuration key is hedge.enabled.
	Disabled bool
}

// defaultConfig returns the built-in defaults: Delay 1s, MaxAttempts 2, every error
// hedged, none aborting, budget on with BudgetPercent 10, BudgetWindow 10s and
// BudgetMinPerSecond 1, enabled.
func defaultConfig() config {
	return config{Delay: time.Second, MaxAttempts: 2, BudgetPercent: 10, BudgetWindow: 10 * time.Second,
		BudgetMinPerSecond: 1}
}

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-004 if
// Delay < 0; R4C-ATR-008 if MaxAttempts is outside 2..10; R4C-ATR-007 if BudgetPercent is
// outside [0, 100], BudgetWindow is not positive, or BudgetMinPerSecond is negative or
// not finite (NaN and ±Inf are refused). The budget fields are checked whether or not
// the budget is on.
func (c config) validate() error {
	switch {
	case c.Delay < 0:
		return r4c.Errorf(r4c.NegativeDuration, "hedge.delay", c.Delay.String(),
			"delay must not be negative (0 starts the hedges at once)")
	case c.MaxAttempts < minAttempts || c.MaxAttempts > maxAttempts:
		return r4c.Errorf(r4c.BadAttempts, "hedge.maxAttempts", strconv.Itoa(c.MaxAttempts),
			"maxAttempts must be between %d and %d (it counts the first attempt)", minAttempts, maxAttempts)
	case !(c.BudgetPercent >= 0 && c.BudgetPercent <= 100):
		return r4c.Errorf(r4c.OutOfRange, "hedge.budgetPercent", r4c.FormatFloat(c.BudgetPercent),
			"budgetPercent must be between 0 and 100")
	case c.BudgetWindow <= 0:
		return r4c.Errorf(r4c.OutOfRange, "hedge.budgetWindow", c.BudgetWindow.String(),
			"budgetWindow must be more than 0")
	case !(c.BudgetMinPerSecond >= 0) || math.IsInf(c.BudgetMinPerSecond, 1):
		return r4c.Errorf(r4c.OutOfRange, "hedge.budgetMinPerSecond", r4c.FormatFloat(c.BudgetMinPerSecond),
			"budgetMinPerSecond must be a finite number of at least 0")
	}
	return nil
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	config
	contract.Common
}

func defaults() settings { return settings{config: defaultConfig()} }

// budgetEnabled is the attribute budgetEnabled, stored inverted in NoBudget so that the
// zero config has the budget on.
func budgetEnabled() contract.Attr[settings] {
	a := contract.EnabledAttr(func(s *settings) *bool { return &s.NoBudget })
	a.Name, a.Option = "budgetEnabled", "Budget"
	return a
}

// descriptor is how a registry sees hedges.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L: Layer,
	Attrs: []contract.Attr[settings]{
		contract.DurationAttr("delay", func(s *settings) *time.Duration { return &s.Delay }),
		contract.IntAttr("maxAttempts", func(s *settings) *int { return &s.MaxAttempts }),
		contract.FloatAttr("budgetPercent", func(s *settings) *float64 { return &s.BudgetPercent }),
		contract.DurationAttr("budgetWindow", func(s *settings) *time.Duration { return &s.BudgetWindow }),
		contract.FloatAttr("budgetMinPerSecond", func(s *settings) *float64 { return &s.BudgetMinPerSecond }),
		budgetEnabled(),
		contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
	},
	Defaults: defaults,
	Config:   func(s *settings) any { return s.config },
	State:    contract.Typed((*Hedge).Snapshot),
	Metrics:  metrics,

	Compose: contract.Composition{
		Rank:      30,
		AsyncOnly: codeSync,
		Role: contract.Role{Name: contract.RoleAttempts, Code: codeWithRetry,
			Reason: "a composition has a hedge or a retry, not both: the hedge starts the attempts a retry would, and takes its place in the order"},
		BindAttempts: bindAttempts,
	},
	CodeAttrs: []contract.Param{
		{Name: "hedgeOn", Option: "On", Value: contract.ErrorsValue},
		{Name: "abortOn", Option: "AbortOn", Value: contract.ErrorsValue},
	},
}, build, (*settings).validate,
	func(h *Hedge) string { return h.events.ID },
	func(h *Hedge) config { return h.cfg })

// bindAttempts binds a hedge to the gate of its composition's layer that limits
// attempts: see limitedBy.
func bindAttempts(p contract.Instance, gate contract.AttemptGate) (contract.Instance, bool) {
	h, ok := p.(*Hedge)
	if !ok || h == nil {
		return p, false
	}
	return h.limitedBy(gate), true
}

func init() { contract.Register(descriptor) }

// Option configures a hedge.
type Option func(*settings)

// Enabled false makes every call a single attempt, with no hedge, no budget and no event.
// Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Delay sets how long the hedge waits for a result after the last attempt started before
// it starts another, on the hedge's clock. Default 1s. 0 starts the attempts one after
// another at once. Negative fails with R4C-ATR-004.
func Delay(d time.Duration) Option { return func(s *settings) { s.Delay = d } }

// MaxAttempts sets the total number of attempts of one call, the first included. Default
// 2. Outside 2..10 fails with R4C-ATR-008.
func MaxAttempts(n int) Option { return func(s *settings) { s.MaxAttempts = n } }

// On adds errors that start the next attempt at once when an attempt fails with
// them, matched with errors.Is. Default empty: every error does. Each call adds to the
// list. AbortOn wins over it. An error outside a non-empty list does not start a hedge:
// the call waits for the attempts still in flight, and fails with it if there are none.
func On(errs ...error) Option {
	return func(s *settings) { s.HedgeOn = contract.Append(s.HedgeOn, errs) }
}

// AbortOn adds errors that end the call at once, matched with errors.Is: an attempt that
// fails with one fails the call with it, and every other attempt is canceled. Default
// empty. It wins over On. Each call adds to the list.
func AbortOn(errs ...error) Option {
	return func(s *settings) { s.AbortOn = contract.Append(s.AbortOn, errs) }
}

// BudgetPercent sets the percentage of the calls that arrived in the budget window that
// the hedges started in it may reach (see Budget). Default 10. Outside [0, 100] (or NaN)
// fails with R4C-ATR-007.
func BudgetPercent(p float64) Option { return func(s *settings) { s.BudgetPercent = p } }

// BudgetWindow sets the span over which the budget counts calls and hedges, on the
// hedge's clock (see Budget). Default 10s. Zero or negative fails with R4C-ATR-007.
func BudgetWindow(d time.Duration) Option { return func(s *settings) { s.BudgetWindow = d } }

// BudgetMinPerSecond sets the budget's floor, in hedges per second: at least
// BudgetMinPerSecond × BudgetWindow (in seconds) hedges are allowed per window, whatever
// BudgetPercent allows (see Budget). Default 1. Negative, NaN or infinite fails with
// R4C-ATR-007.
func BudgetMinPerSecond(f float64) Option { return func(s *settings) { s.BudgetMinPerSecond = f } }

// Budget false removes the budget: every call may start its hedges, up to MaxAttempts.
// Default true. The budget's settings are validated either way.
//
// The budget: the hedges started in the last BudgetWindow may be at most BudgetPercent%
// of the calls that arrived in it, but a window always allows at least
// BudgetMinPerSecond × BudgetWindow (in seconds) hedges, so that a quiet service still
// hedges. A hedge is allowed when hedges < max(BudgetPercent/100 × calls,
// BudgetMinPerSecond × BudgetWindow) over the window, the calls counting the current
// one. The window is a fixed ring of 20 buckets on the hedge's clock, each
// BudgetWindow/20 wide (rounded down to the nanosecond, at least 1ns): counting
// allocates nothing, takes the budget's lock once per call and once per hedge, and the
// memory is fixed. It is exact to one bucket: a call or a hedge counts for more than 19
// buckets' width and for at most 20, after it happened; for a BudgetWindow that is a
// multiple of 20ns (every whole number of microseconds), more than BudgetWindow −
// BudgetWindow/20 and at most BudgetWindow. Another window is shortened by the rounding,
// by less than 20ns; a window under 20ns still spans 20 buckets of 1ns. Budget(false)
// removes the budget, and with it the counting.
//
// In a registry's composition with a layer that limits attempts (a retry budget,
// resilience.RetryBudget), a hedge needs both to allow it: its own budget is asked first,
// then that layer; a hedge that layer refuses is skipped as one its own budget refuses,
// and is taken back from its own budget's count.
func Budget(on bool) Option { return func(s *settings) { s.NoBudget = !on } }

// Name shares one hedge, and its budget, among every function wrapped with this name; the
// name is the instance id, also of a hedge built with New. Default none: each wrapped
// function has its own hedge, whose id is the function's id (a hedge built with New has
// no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.hedge.*, which take precedence
// over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source, which times the delays and the budget window. Default
// clock.System(). A registry sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the hedge's EventHedged, EventWon, EventSkipped and
// EventFailed events (their documentation tells when each is published). Default none:
// nothing is published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
