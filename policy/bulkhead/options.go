package bulkhead

import (
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Layer is the bulkhead's layer, after the timeout in the default order, and the segment of its configuration keys
// ("bulkhead" in defaults.bulkhead.…).
const Layer policy.Layer = "bulkhead"

// Config is a bulkhead's resolved configuration, validated when the bulkhead is built
// and when Reconfigure replaces it. Its zero value is not valid (MaxConcurrent 0): start from DefaultConfig. Two
// identical option sets give configurations equal under reflect.DeepEqual.
type Config struct {
	// MaxConcurrent is how many calls may be in flight at once. At least 1. Default 25.
	// It can change on a running bulkhead (Reconfigure).
	MaxConcurrent int
	// MaxWait is how long a call may wait for a slot, on the bulkhead's clock; 0 rejects
	// at once when every slot is taken. At least 0. Default 0. It can change on a running
	// bulkhead (Reconfigure), for the calls that arrive after the change.
	MaxWait time.Duration
	// Disabled true lets every call through without taking a slot. Default false: the
	// zero value is enabled. The configuration key is bulkhead.enabled. It cannot change
	// on a running bulkhead: Reconfigure refuses a change with R4C-REG-012.
	Disabled bool
}

// DefaultConfig returns the built-in defaults: MaxConcurrent 25, MaxWait 0, enabled.
func DefaultConfig() Config { return Config{MaxConcurrent: 25} }

// Validate checks the configuration and returns a *policy.ConfigError: R4C-ATR-007 if
// MaxConcurrent < 1, R4C-ATR-004 if MaxWait < 0.
func (c Config) Validate() error {
	switch {
	case c.MaxConcurrent < 1:
		return r4c.Errorf(r4c.OutOfRange, "bulkhead.maxConcurrent", strconv.Itoa(c.MaxConcurrent),
			"maxConcurrent must be at least 1")
	case c.MaxWait < 0:
		return r4c.Errorf(r4c.NegativeDuration, "bulkhead.maxWait", c.MaxWait.String(),
			"maxWait must not be negative")
	}
	return nil
}

// settings is what options produce: the configuration and how the instance is named,
// timed and observed.
type settings struct {
	Config
	kind.Common
}

func defaults() settings { return settings{Config: DefaultConfig()} }

// descriptor is how a registry sees bulkheads.
var descriptor = &kind.Descriptor[settings]{
	L: Layer,
	Attrs: []kind.Attr[settings]{
		kind.IntAttr("maxConcurrent", func(s *settings) *int { return &s.MaxConcurrent }),
		kind.DurationAttr("maxWait", func(s *settings) *time.Duration { return &s.MaxWait }),
		kind.EnabledAttr(func(s *settings) *bool { return &s.Disabled }),
	},
	Defaults: defaults,
	Common:   func(s *settings) *kind.Common { return &s.Common },
	Config:   func(s *settings) any { return s.Config },
	Build:    func(s settings) (kind.Instance, error) { return build(s) },
	Validate: func(s *settings) error { return s.Config.Validate() },
	Of:       func(p kind.Instance) any { return p.(*Bulkhead).Config() },
	State:    func(p kind.Instance) any { return p.(*Bulkhead).Snapshot() },
	Metrics:  metrics,

	Compose: kind.Composition{Rank: 70, Live: kind.LiveAs[Config]},
}

func init() { kind.Register(descriptor) }

// Option configures a bulkhead.
type Option func(*settings)

// WithConfig replaces the whole configuration with c, as resolved elsewhere (e.g. from
// the application's own settings); options after it change c further. Default
// DefaultConfig(). The zero Config is enabled but not valid (MaxConcurrent 0): start from
// DefaultConfig to keep the defaults. The bulkhead validates c when it is built.
func WithConfig(c Config) Option { return func(s *settings) { s.Config = c } }

// Enabled false lets every call through without taking a slot. Default true.
func Enabled(on bool) Option { return func(s *settings) { s.Disabled = !on } }

// MaxConcurrent sets how many calls may be in flight at once. Default 25. Less than 1
// fails with R4C-ATR-007.
func MaxConcurrent(n int) Option { return func(s *settings) { s.MaxConcurrent = n } }

// MaxWait sets how long a call may wait for a slot, on the bulkhead's clock. Default 0:
// reject at once. Negative fails with R4C-ATR-004.
func MaxWait(d time.Duration) Option { return func(s *settings) { s.MaxWait = d } }

// Name shares one bulkhead, and its slots, among every function wrapped with this name;
// the name is the instance id. Default none: each wrapped function has its own bulkhead,
// whose id is the function's id.
func Name(name string) Option { return kind.Name[settings](name) }

// UseConfig applies the configuration keys configs.<name>.bulkhead.*, which take
// precedence over the options in code. Default none. A name with no such keys fails with
// R4C-REG-004 when the function is wrapped.
func UseConfig(name string) Option { return kind.UseConfig[settings](name) }

// WithClock sets the time source, which times MaxWait. Default clock.System(). A registry
// sets its own.
func WithClock(c clock.Clock) Option { return kind.WithClock[settings](c) }

// WithInstanceID sets the instance id of a bulkhead built with New. Default the Name,
// else "bulkhead".
func WithInstanceID(id string) Option { return kind.WithInstanceID[settings](id) }

// OnEvent sets the listener of the bulkhead's events: EventRejected, EventWaited,
// and ConfigChanged when Reconfigure changes its configuration. Default none: nothing is
// published. A registry adds its own listeners.
func OnEvent(l policy.Listener) Option { return kind.OnEvent[settings](l) }

// Observe sets the observer asked for the instance's observe.Recorder, which is told each
// call's outcome (see observe.Outcome) and each event with the call's context. A
// registry's observer replaces it. Default none.
func Observe(o observe.Observer) Option { return kind.Observe[settings](o) }
