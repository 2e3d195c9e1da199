package resilience

import (
	"maps"
	"sync"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Registry owns the clock, the configuration keys, the event listeners and every policy
// instance built through it, which it hands out: Lookup returns the instances themselves,
// RateLimiter a rate limiter's read-only ratelimit.Handle. Limits are per registry: two
// registries have their own instances. A Registry is safe for concurrent use.
type Registry struct {
	clk       clock.Clock
	listeners []func(policy.Event)
	listener  policy.Listener  // fans out to listeners; nil when there are none
	observer  observe.Observer // makes the recorders of outcomes; nil: none are recorded
	// presets holds, per layer, the []Option applied to every instance of that layer
	// before its configuration keys and options: the registry's own defaults.
	presets map[policy.Layer]any

	mu          sync.Mutex
	props       *properties                          // the configuration keys; Reload replaces them
	instances   map[instanceKey]contract.Instance    // every shared instance, by layer and id
	named       map[instanceKey]bool                 // the instances built by a spec with a Name
	resolutions int                                  // how many resolutions were recorded (see record)
	overruled   map[overruledKey]*policy.ConfigError // the keys that locked specs overrule now (see Locked)

	// reloadMu makes Reloads one at a time, and keeps builds out while a Reload applies
	// its changes (held for writing by Reload, for reading by a build): a function that
	// shares an instance by name never sees the keys of a reload and the instance's old
	// configuration.
	reloadMu sync.RWMutex
}

// instanceKey names an instance: ids are unique within a layer.
type instanceKey struct {
	layer policy.Layer
	id    string
}

// RegistryOption configures a Registry.
type RegistryOption func(*registryOptions)

type registryOptions struct {
	clk       clock.Clock
	props     map[string]string
	listeners []func(policy.Event)
	observer  observe.Observer
	presets   map[policy.Layer]any // see Registry.presets
}

// WithClock sets the clock of every policy built through the registry, replacing the
// clocks given to their options. Default clock.System(). Tests pass a clock.Manual.
func WithClock(c clock.Clock) RegistryOption {
	return func(o *registryOptions) { o.clk = c }
}

// WithProperties adds configuration keys, e.g. from LoadProperties, LoadYAML
// or FromEnv. Several calls merge; for a key given twice the later call wins.
func WithProperties(props map[string]string) RegistryOption {
	return func(o *registryOptions) {
		if o.props == nil {
			o.props = map[string]string{}
		}
		maps.Copy(o.props, props)
	}
}

// WithEventListener adds a listener of every policy's events. Listeners run on
// the goroutine of the call that caused the event, in the order they were added; they
// must be quick and must not block. The events of a Reload's changes (ConfigChanged, and
// a breaker's transition) reach them on the goroutine that called Reload, which does not
// hold the registry's lock then: such a listener may look instances up, but must not call
// Reload, Wrap or NewPipeline on the registry.
func WithEventListener(fn func(policy.Event)) RegistryOption {
	return func(o *registryOptions) {
		if fn != nil {
			o.listeners = append(o.listeners, fn)
		}
	}
}

// WithObserver sets the observer of every call's outcomes: it is asked once for the
// observe.Recorder of each policy instance the registry builds and of each wrapped
// function or pipeline (layer observe.LayerCall), and each recorder is then told the
// outcome of every call at its layer and every event its instance publishes, with the
// call's context (see observe.Outcome). The policies take no observer of their own (only
// a keyed.Limiter, which no registry builds, takes keyed.Observe): this is how a
// registry's instances are observed. Without an observer nothing is measured: a call
// costs what it costs with none. A later WithObserver replaces an earlier one; nil
// removes it. Default none. resilienceotel.New makes one that exports OpenTelemetry
// metrics and span events.
func WithObserver(o observe.Observer) RegistryOption {
	return func(opts *registryOptions) { opts.observer = o }
}

// NewRegistry returns a registry. Every configuration key is checked here: an unknown or
// malformed key (e.g. instances..rateLimiter.permits, whose id is empty) fails with
// R4C-CFG-001, whose message says what is wrong or names the closest valid key; a value
// of the wrong syntax fails with its attribute's code (R4C-ATR-001 duration, R4C-ATR-005
// number, R4C-ATR-006 boolean, R4C-ATR-007 enumeration). The values of each policy in the
// scopes defaults and configs.<name> are checked for range over the policy's built-in
// defaults (R4C-ATR-002, -003, -004, -007, R4C-REG-001), as far as they can be without
// the attributes they leave to code (a rateLimiter.maxWait alone is checked with the
// permits and period of the instance, when it is built). Errors are *policy.ConfigError
// whose Key is the whole configuration key.
func NewRegistry(opts ...RegistryOption) (*Registry, error) {
	var o registryOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	props, err := newProperties(o.props)
	if err != nil {
		return nil, err
	}
	r := &Registry{
		clk:       o.clk,
		props:     props,
		listeners: o.listeners,
		observer:  o.observer,
		presets:   o.presets,
		instances: map[instanceKey]contract.Instance{},
		named:     map[instanceKey]bool{},
	}
	if r.presets == nil {
		r.presets = map[policy.Layer]any{}
	}
	if r.clk == nil {
		r.clk = clock.System()
	}
	switch len(r.listeners) {
	case 0:
	case 1:
		r.listener = r.listeners[0]
	default:
		listeners := r.listeners
		r.listener = func(e policy.Event) {
			for _, l := range listeners {
				l(e)
			}
		}
	}
	return r, nil
}

// UnusedKeys returns, sorted, the configuration keys that no instance built so far has
// used (nil for a nil registry): keys of an instances.<id> whose id no wrapped function or
// pipeline has, of a configs.<name> that no spec selects, or of a policy that no instance
// has. NewRegistry cannot know the ids that will exist, so a typo in an id or a name
// (instances.Serch.…) passes it; call UnusedKeys once every function is wrapped (at the
// end of start-up, or in a test) to find such keys.
func (r *Registry) UnusedKeys() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.props.unused()
}

// withListener returns a listener that calls own (set in code) and the registry's.
func (r *Registry) withListener(own policy.Listener) policy.Listener {
	switch {
	case own == nil:
		return r.listener
	case r.listener == nil:
		return own
	}
	reg := r.listener
	return func(e policy.Event) { own(e); reg(e) }
}
