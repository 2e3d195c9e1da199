// Package resilience is where resilience4go's policies meet: a Registry that owns the
// clock, the configuration keys and the policy instances; Wrap functions and Pipelines
// that compose policies in one fixed order; handles, snapshots and events.
//
// The order of the layers is fixed, outermost first (SPEC CO-1):
//
//	Fallback → Retry → CircuitBreaker → RateLimiter → Timeout → Bulkhead → the function
//
// whatever order the specs are given in. The composition is built once, when a function is
// wrapped or a pipeline is built, so a call through it costs only the policies' own work:
// an admitted call through a rate limiter allocates nothing.
//
// Instances are identified by id (SPEC RG-1): the id given to Wrap or NewPipeline, or the
// Name option of a spec, which shares one instance among every function that uses it
// (SPEC RG-2). Attributes come from code and from configuration keys with the precedence
// of SPEC RG-4: built-in defaults, defaults.<policy>.<attr>, options in code,
// configs.<name>.<policy>.<attr>, instances.<id>.<policy>.<attr>.
package resilience

import (
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// Registry owns the clock (SPEC RG-6), the configuration keys (RG-4), the event listeners
// (RG-5) and every policy instance built through it (RG-2, RG-3). Limits are per registry:
// two registries have their own instances (SPEC RL-15). A Registry is safe for concurrent
// use.
type Registry struct {
	clk       clock.Clock
	props     *properties
	listeners []func(policy.Event)
	listener  policy.Listener // fans out to listeners; nil when there are none
	// backend is every rate limiter's default backend; nil: in-process (backend.go).
	backend ratelimit.Backend

	mu        sync.Mutex
	limiters  map[string]*ratelimit.Limiter
	retries   map[string]*retry.Retry
	breakers  map[string]*circuitbreaker.Breaker
	timeouts  map[string]*timeout.Timeout
	bulkheads map[string]*bulkhead.Bulkhead
}

// RegistryOption configures a Registry.
type RegistryOption func(*registryOptions)

type registryOptions struct {
	clk       clock.Clock
	props     map[string]string
	listeners []func(policy.Event)
	backend   ratelimit.Backend
}

// WithClock sets the clock of every policy built through the registry [clock.System()]
// (SPEC RG-6). Tests pass a clock.Manual.
func WithClock(c clock.Clock) RegistryOption {
	return func(o *registryOptions) { o.clk = c }
}

// WithProperties adds configuration keys (SPEC RG-4), e.g. from LoadProperties, LoadYAML
// or FromEnv. Several calls merge; for a key given twice the later call wins.
func WithProperties(props map[string]string) RegistryOption {
	return func(o *registryOptions) {
		if o.props == nil {
			o.props = map[string]string{}
		}
		maps.Copy(o.props, props)
	}
}

// WithEventListener adds a listener of every policy's events (SPEC RG-5). Listeners run on
// the goroutine of the call that caused the event, in the order they were added; they
// must be quick and must not block.
func WithEventListener(fn func(policy.Event)) RegistryOption {
	return func(o *registryOptions) {
		if fn != nil {
			o.listeners = append(o.listeners, fn)
		}
	}
}

// NewRegistry returns a registry. Every configuration key is checked here: an unknown key
// fails with R4C-CFG-001, whose message names the closest valid key; a value of the wrong
// syntax fails with its attribute's code (R4C-ATR-001 duration, R4C-ATR-005 number,
// R4C-ATR-006 boolean, R4C-ATR-007 enumeration). Errors are *policy.ConfigError.
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
		backend:   o.backend,
		limiters:  map[string]*ratelimit.Limiter{},
		retries:   map[string]*retry.Retry{},
		breakers:  map[string]*circuitbreaker.Breaker{},
		timeouts:  map[string]*timeout.Timeout{},
		bulkheads: map[string]*bulkhead.Bulkhead{},
	}
	if r.clk == nil {
		r.clk = clock.System()
	}
	switch len(r.listeners) {
	case 0:
	case 1:
		r.listener = r.listeners[0]
	default:
		r.listener = func(e policy.Event) {
			for _, l := range r.listeners {
				l(e)
			}
		}
	}
	return r, nil
}

// Clock returns the registry's clock (SPEC RG-6).
func (r *Registry) Clock() clock.Clock { return r.clk }

// RateLimiter returns the read-only handle of the rate limiter with this id, once a
// function using it was wrapped or its pipeline built (SPEC RG-3). An unknown id fails
// with R4C-REG-009.
func (r *Registry) RateLimiter(id string) (ratelimit.Handle, error) {
	return lookup(r, r.limiters, ratelimit.Segment, id)
}

// CircuitBreaker returns the handle of the circuit breaker with this id; an unknown id
// fails with R4C-REG-009.
func (r *Registry) CircuitBreaker(id string) (circuitbreaker.Handle, error) {
	return lookup(r, r.breakers, circuitbreaker.Segment, id)
}

// Bulkhead returns the read-only handle of the bulkhead with this id; an unknown id fails
// with R4C-REG-009.
func (r *Registry) Bulkhead(id string) (bulkhead.Handle, error) {
	return lookup(r, r.bulkheads, bulkhead.Segment, id)
}

func lookup[P any](r *Registry, m map[string]P, segment, id string) (P, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := m[id]
	if !ok {
		return p, &policy.ConfigError{Code: policy.CodeUnknownInstance, Key: segment, Value: id,
			Reason: "no instance with this id: it exists once a function using it is wrapped or its pipeline built"}
	}
	return p, nil
}

// UnusedKeys returns, sorted, the configuration keys that no instance built so far has
// used: keys of an instances.<id> whose id no wrapped function or pipeline has, of a
// configs.<name> that no spec selects, or of a policy that no instance has. NewRegistry
// cannot know the ids that will exist, so a typo in an id or a name (instances.Serch.…)
// passes it; call UnusedKeys once every function is wrapped (at the end of start-up, or
// in a test) to find such keys.
func (r *Registry) UnusedKeys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.props.unused()
}

// Snapshot is the state of every instance of a registry, one entry per instance, sorted
// by id (SPEC RG-3).
type Snapshot struct {
	RateLimiters    []ratelimit.Snapshot
	CircuitBreakers []circuitbreaker.Snapshot
	Bulkheads       []bulkhead.Snapshot
}

// Snapshot returns the state of every rate limiter, circuit breaker and bulkhead.
func (r *Registry) Snapshot() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Snapshot{
		RateLimiters:    snapshots(r.limiters, (*ratelimit.Limiter).Snapshot),
		CircuitBreakers: snapshots(r.breakers, (*circuitbreaker.Breaker).Snapshot),
		Bulkheads:       snapshots(r.bulkheads, (*bulkhead.Bulkhead).Snapshot),
	}
}

func snapshots[P, S any](m map[string]P, snap func(P) S) []S {
	out := make([]S, 0, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		out = append(out, snap(m[id]))
	}
	return out
}

// resolve applies the precedence of SPEC RG-4 to one policy's settings, which hold the
// built-in defaults: defaults.<segment>.*, then the options in code, then
// configs.<name>.<segment>.* (an unknown name is R4C-REG-004), then
// instances.<id>.<segment>.*. The instance id is the Name option or wrapID (SPEC RG-1).
// The registry's clock and listeners replace those of the options (SPEC RG-6).
func (r *Registry) resolve(segment, wrapID string, c *policy.Common, set func(attr, value string) error, applyCode func()) (string, error) {
	if err := r.props.apply(scopeDefaults, segment, set); err != nil {
		return "", err
	}
	applyCode()
	if c.ConfigName != "" {
		if !r.props.hasConfig(c.ConfigName) {
			return "", &policy.ConfigError{Code: policy.CodeUnknownConfig, Key: segment + ".useConfig", Value: c.ConfigName,
				Reason: "no configuration keys configs." + c.ConfigName + ".*"}
		}
		if err := r.props.apply(scopeConfigs+"."+c.ConfigName, segment, set); err != nil {
			return "", err
		}
	}
	id := c.Name
	if id == "" {
		id = wrapID
	}
	if err := r.props.apply(scopeInstances+"."+id, segment, set); err != nil {
		return "", err
	}
	c.InstanceID = id
	c.Clock = r.clk
	c.Listener = r.withListener(c.Listener)
	return id, nil
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

// instance returns the instance id of m, or a new one built from cfg. An existing instance
// must have the same resolved configuration (SPEC RG-2), or it fails with R4C-REG-008.
// It reports whether the instance is new. Callers hold r.mu.
func instance[P, C any](m map[string]P, segment, id string, cfg C, config func(P) C, build func() (P, error)) (P, bool, error) {
	if p, ok := m[id]; ok {
		if have := config(p); !reflect.DeepEqual(have, cfg) {
			var zero P
			return zero, false, policy.Errorf(policy.CodeConflict, segment, id,
				"%q is shared by functions that resolve different configurations: %+v and %+v", id, have, cfg)
		}
		return p, false, nil
	}
	p, err := build()
	return p, err == nil, err
}
