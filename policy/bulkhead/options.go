package bulkhead

import (
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Layer is the bulkhead's layer, after the timeout in the default order, and the segment of its configuration keys
// ("bulkhead" in defaults.bulkhead.…).
const Layer policy.Layer = "bulkhead"

// Config is a bulkhead's resolved configuration, as Bulkhead.Config reports it: the
// options and configuration keys set it. Two identical option sets give configurations
// equal under reflect.DeepEqual.
//
// A reload of a registry's configuration changes a running bulkhead. MaxConcurrent
// changes at once: raising it hands the new slots to the waiting calls, oldest first, and
// then to new calls; lowering it never interrupts a call in flight, it only makes new
// calls wait (or be rejected) until the calls in flight are fewer than the new limit.
// MaxWait applies to the calls that arrive after the change; a call already waiting keeps
// the MaxWait it arrived with. Whether the bulkhead is enabled cannot change on a running
// bulkhead: the reload is refused with R4C-REG-012 (a disabled bulkhead's callers take no
// slot, so the slots held across the change could not be counted right). An invalid
// configuration is refused with the error New would return and changes nothing. A change
// publishes a ConfigChanged event naming the attributes that changed ("maxConcurrent",
// "maxWait", "priorityReserve", "shadow"); a configuration equal to the one in force publishes
// nothing. PriorityReserve changes at once: lowered, the slots it frees go to the waiting
// calls; raised, no call in flight is interrupted.
type Config struct {
	// MaxConcurrent is how many calls may be in flight at once. At least 1. Default 25.
	// A reload of the registry's configuration changes it on a running bulkhead.
	MaxConcurrent int
	// MaxWait is how long a call may wait for a slot, on the bulkhead's clock; 0 rejects
	// at once when every slot is taken. At least 0. Default 0. A reload changes it on a
	// running bulkhead, for the calls that arrive after the change.
	MaxWait time.Duration
	// PriorityReserve is the fraction of MaxConcurrent kept for the calls of
	// policy.PriorityCritical and above (the priority of a call that carries none, see
	// policy.WithPriority): a call of policy.PrioritySheddable is let in only while fewer
	// than MaxConcurrent·(1−PriorityReserve) calls are in flight, one of
	// policy.PrioritySheddablePlus while fewer than MaxConcurrent·(1−PriorityReserve/2),
	// rounded down, but at least 1 (a call of any priority is let in when none is in
	// flight). Calls that wait are let in highest priority first. 0 lets every priority
	// use every slot (the queue still goes by priority). In [0, 1], taken to the nearest
	// millionth. Default 0.5: sheddable calls may take half the slots, sheddable_plus three
	// quarters. A reload changes it on a running bulkhead.
	PriorityReserve float64
	// Disabled true lets every call through without taking a slot. Default false: the
	// zero value is enabled. The configuration key is bulkhead.enabled. It cannot change
	// on a running bulkhead: a reload that changes it is refused with R4C-REG-012.
	Disabled bool
	// Shadow true lets every call through and still decides each as usual: a call that
	// finds no slot free at once runs at once, holding none, and is counted and published
	// as a rejection in shadow (see the Shadow option). Default false. The configuration
	// key is bulkhead.shadow; a reload changes it on a running bulkhead, for the calls
	// that arrive after the change.
	Shadow bool
}

// defaultConfig returns the built-in defaults: MaxConcurrent 25, MaxWait 0,
// PriorityReserve 0.5, enabled.
func defaultConfig() Config { return Config{MaxConcurrent: 25, PriorityReserve: 0.5} }

// validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if
// MaxConcurrent < 1 or PriorityReserve outside [0, 1], R4C-ATR-004 if MaxWait < 0.
func (c Config) validate() error {
	return r4c.First(
		r4c.AtLeast("bulkhead.maxConcurrent", c.MaxConcurrent, 1, ""),
		r4c.NotNegative("bulkhead.maxWait", c.MaxWait, ""),
		r4c.Between("bulkhead.priorityReserve", c.PriorityReserve, 0, 1),
	)
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
	contract.IntAttr("maxConcurrent", func(s *settings) *int { return &s.MaxConcurrent }),
	contract.DurationAttr("maxWait", func(s *settings) *time.Duration { return &s.MaxWait }),
	contract.FloatAttr("priorityReserve", func(s *settings) *float64 { return &s.PriorityReserve }),
	contract.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
	contract.ShadowAttr(func(s *settings) *bool { return &s.Shadow }),
}

// descriptor is how a registry sees bulkheads.
var descriptor = contract.Conventional(&contract.Descriptor[settings]{
	L:        Layer,
	Attrs:    attrs,
	Defaults: defaults,
	Config:   func(s *settings) any { return s.Config },
	State:    contract.Typed((*Bulkhead).Snapshot),
	Metrics:  metrics,

	Compose: contract.Composition{Rank: 70, Live: contract.Live((*Bulkhead).checkReconfigure, (*Bulkhead).reconfigure)},
}, build, (*settings).validate,
	func(b *Bulkhead) string { return b.events.ID },
	(*Bulkhead).Config)

func init() { contract.Register(descriptor) }

// Option configures a bulkhead.
type Option func(*settings)

// Enabled false lets every call through without taking a slot. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// Shadow true puts the bulkhead in shadow mode, a dark launch: it decides every call as
// usual and rejects none. A call that finds no slot free at once (for its priority, and
// nobody of its priority or above waiting) runs at once, holding no slot, instead of
// waiting or being rejected: it publishes the EventRejected event it would have had at
// once, with the attribute "shadow" (true) after "priority" and "shed", is counted in
// Snapshot.ShadowRejected and in the metric resilience.bulkhead.shadow_rejections (and in
// Shed if it would have been shed), and is recorded as admitted (ResultAdmitted, Wait 0):
// it ran. Nothing waits in shadow mode: with MaxWait 0 the calls counted are exactly the
// ones the bulkhead would have rejected, and the slots held move as they would; with
// MaxWait > 0 they are the calls that would have waited, some of which would have had a
// slot in time. Default false. The configuration key is bulkhead.shadow; a reload changes
// it live.
func Shadow(on bool) Option { return func(s *settings) { s.Shadow = on } }

// MaxConcurrent sets how many calls may be in flight at once. Default 25. Less than 1
// fails with R4C-ATR-007.
func MaxConcurrent(n int) Option { return func(s *settings) { s.MaxConcurrent = n } }

// MaxWait sets how long a call may wait for a slot, on the bulkhead's clock. Default 0:
// reject at once. Negative fails with R4C-ATR-004.
func MaxWait(d time.Duration) Option { return func(s *settings) { s.MaxWait = d } }

// PriorityReserve sets the fraction of MaxConcurrent kept for the calls of
// policy.PriorityCritical and above (see Config.PriorityReserve): r for sheddable calls,
// r/2 for sheddable_plus ones. Default 0.5. Outside [0, 1] fails with R4C-ATR-007.
func PriorityReserve(r float64) Option { return func(s *settings) { s.PriorityReserve = r } }

// Name shares one bulkhead, and its slots, among every function wrapped with this name;
// the name is the instance id, also of a bulkhead built with New. Default none: each
// wrapped function has its own bulkhead, whose id is the function's id (a bulkhead built
// with New has no id, "").
func Name(name string) Option { return contract.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.bulkhead.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return contract.UseConfig[settings](name) }

// WithClock sets the time source, which times MaxWait. Default clock.System(). A registry
// sets its own.
func WithClock(c clock.Clock) Option { return contract.WithClock[settings](c) }

// OnEvent sets the listener of the bulkhead's events: EventRejected, EventWaited (see
// them for when each is published), and ConfigChanged when a reload changes its
// configuration. Default none: nothing is published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return contract.OnEvent[settings](l) }
