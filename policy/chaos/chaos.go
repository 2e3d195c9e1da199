// Package chaos is resilience4go's chaos policy (layer chaos.Layer, the innermost of the
// built-in layers in the default order): at a configured rate, it injects into calls an
// error, a result, a latency or a behaviour of your own, so that the resilience of a
// running system can be tested under the faults it is built for, not only with a manual
// clock in a unit test.
//
// A chaos policy is never on unless configured: it is disabled by default, also in a
// composition, and the key chaos.enabled (or the option Enabled) switches it on; a
// registry's reload switches it on and off, and changes its rate and latency, while it
// runs. Build one with New and guard a function with NewPolicy, or let a registry build
// it, composed with other policies, with resilience.Wrap:
//
//	c, err := chaos.New(chaos.Enabled(true), chaos.Rate(0.1), chaos.Error(errUnavailable))
//	get := chaos.NewPolicy[Stock](c).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock,
//		resilience.Chaos(chaos.Error(errUnavailable), chaos.Latency(200*time.Millisecond)))
//
// Where the detail is:
//   - Chaos: how a call is chosen, and what an injected call does;
//   - NewPolicy: how a call goes, synchronous or returning a future;
//   - ErrInjected, the error injected by default; EventInjected, the event;
//   - New (the defaults), Config (every setting, and what a reload changes) and the
//     options.
package chaos

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// Chaos injects faults into a share of the calls it guards. Build it with New and guard
// calls with NewPolicy (a registry builds its own for resilience.Chaos). It is safe for
// concurrent use. Whether it is enabled, its Rate and its Latency can change while it
// runs (a registry's reload, see Config); each call reads them once, as it arrives.
//
// While it is disabled a call costs one atomic load (besides the arrival check of its
// context) and goes to the function untouched. While it is enabled, each call draws one
// random number, from math/rand/v2's global source or, with Seed, from the policy's own
// SplitMix64 sequence (one atomic add per call), and is injected into with probability
// Rate. A call not injected into goes to the function untouched; neither path allocates.
//
// An injected call does, in order, whatever is configured:
//  1. Latency: it waits, on the policy's clock (a synchronous call on its goroutine, with
//     the clock's Sleep; a call that returns a future on a clock timer, no goroutine
//     waiting). Its context ending, or its future being canceled, ends the wait: the call
//     fails with the context's error (or async.ErrCanceled) and goes no further.
//  2. Behavior: its function runs; an error fails the call with it, as is.
//  3. Result: the call returns what its function returns, without calling the function;
//     or Error: the call fails with its error, as is, without calling the function.
//  4. Otherwise the function is called.
//
// When none of Error, Result, Behavior and Latency is set, an injected call fails with
// ErrInjected, so that the keys chaos.enabled and chaos.rate alone inject faults. Each
// injection is counted (Snapshot) and published as an EventInjected event.
//
// A call whose context is nil or already done when it arrives never runs the function,
// draws nothing and publishes nothing, enabled or not: it fails at once with the
// context's error (policy.ErrNilContext for a nil context).
type Chaos struct {
	// Read-only after New.
	events   contract.Events
	clk      clock.Clock
	err      error     // Error's; nil: none
	result   *outcome  // Result's; nil: none
	behavior *behavior // Behavior's; nil: none
	seeded   bool      // draws come from seq, not math/rand/v2

	cur    atomic.Pointer[state] // the configuration in force, replaced whole by reconfigure
	mu     sync.Mutex            // serializes reconfigure
	seq    atomic.Uint64         // the SplitMix64 state, when seeded
	counts [numKinds]atomic.Uint64
}

// state is a configuration in force, with what the calls derive from it. It is
// read-only once stored.
type state struct {
	cfg       Config
	threshold uint64 // a draw's 53 high bits below it inject: Rate·2⁵³
	fault     error  // the error an injected call ends with; nil: none (a result, or the function)
}

// New builds a chaos policy from opts, over the defaults: disabled, Rate 0.001, no
// latency, and ErrInjected as the fault when nothing else is set. An invalid
// configuration returns a *policy.ConfigError: R4C-ATR-007 (Rate outside [0, 1]),
// R4C-ATR-004 (negative Latency), R4C-CHS-001 (both Error and Result). The instance id is
// the Name, else "" (no id: its events name no instance).
func New(opts ...Option) (*Chaos, error) { return contract.New(defaults, build, opts) }

// build builds a chaos policy from s.
func build(s settings) (*Chaos, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	c := &Chaos{
		events:   s.EventsOf(Layer, s.ID("")),
		clk:      s.ClockOrSystem(),
		err:      s.err,
		result:   s.result,
		behavior: s.behavior,
		seeded:   s.seeded,
	}
	c.seq.Store(s.seed)
	c.cur.Store(c.stateOf(s.Config))
	return c, nil
}

// stateOf returns the state of cfg, a valid configuration.
func (c *Chaos) stateOf(cfg Config) *state {
	st := &state{cfg: cfg, threshold: uint64(cfg.Rate * (1 << 53)), fault: c.err}
	if c.err == nil && c.result == nil && c.behavior == nil && cfg.Latency == 0 {
		st.fault = ErrInjected
	}
	return st
}

// Config returns the configuration in force: the one the policy was built with, or the
// last one a registry's reload applied.
func (c *Chaos) Config() Config { return c.cur.Load().cfg }

// reconfigure applies cfg to the running policy, for a registry's reload, for the calls
// that arrive after it returns. Enabled, Rate and Latency change; what code set (the
// error, result, behaviour and seed) stays as built. cfg is validated as New validates
// it: an invalid cfg returns the same *policy.ConfigError and changes nothing. When cfg
// differs from the configuration in force, a ConfigChanged event is published, whose
// Changed lists the attributes that changed, sorted; when it is equal, nothing is
// published. It is safe for concurrent use, with calls and with other reconfigures
// (which apply one after the other). The event listener must not reload the registry.
func (c *Chaos) reconfigure(cfg Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load().cfg
	changed, err := changes(old, cfg)
	if err != nil || len(changed) == 0 {
		return err
	}
	next := old
	next.Enabled, next.Rate, next.Latency = cfg.Enabled, cfg.Rate, cfg.Latency
	c.cur.Store(c.stateOf(next))
	c.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: changed})
	return nil
}

// checkReconfigure reports the error reconfigure would return for cfg, without applying
// it: nil, or the *policy.ConfigError of an invalid cfg. Every attribute of a chaos
// policy can change live, so no reload is refused as one that cannot. Safe for
// concurrent use.
func (c *Chaos) checkReconfigure(cfg Config) error {
	return contract.ErrOf(changes(c.cur.Load().cfg, cfg))
}

// changes validates cfg and returns the attribute names of the settings in which it
// differs from old, sorted.
func changes(old, cfg Config) ([]string, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return contract.ChangedAttrs(attrs, &settings{Config: old}, &settings{Config: cfg}), nil
}

// hit draws whether the call under st is injected into: true with probability Rate.
func (c *Chaos) hit(st *state) bool {
	if st.threshold == 0 {
		return false
	}
	var x uint64
	if c.seeded {
		x = splitMix64(c.seq.Add(golden))
	} else {
		x = rand.Uint64()
	}
	return x>>11 < st.threshold
}

// golden is SplitMix64's increment, 2⁶⁴ divided by the golden ratio.
const golden = 0x9e3779b97f4a7c15

// splitMix64 is SplitMix64's output function of the state z.
func splitMix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
