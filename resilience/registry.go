package resilience

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// Registry owns the clock, the configuration keys, the event listeners and every policy
// instance built through it, which it hands out as read-only handles. Limits are per
// registry: two registries have their own instances. A Registry is safe for concurrent
// use.
type Registry struct {
	clk       clock.Clock
	listeners []func(policy.Event)
	listener  policy.Listener // fans out to listeners; nil when there are none
	observer  policy.Observer // makes the recorders of outcomes; nil: none are recorded
	// backend is every rate limiter's default backend; nil: in-process (backend.go).
	backend ratelimit.Backend
	// presets holds, per layer, the []Option applied to every instance of that layer
	// before its configuration keys and options: the registry's own defaults.
	presets map[policy.Layer]any

	mu          sync.Mutex
	props       *properties                   // the configuration keys; Reload replaces them
	instances   map[instanceKey]kind.Instance // every shared instance, by layer and id
	resolutions int                           // how many resolutions were recorded (see record)

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
	observer  policy.Observer
	backend   ratelimit.Backend
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
// policy.Recorder of each policy instance the registry builds and of each wrapped
// function or pipeline (layer policy.LayerCall), and each recorder is then told the
// outcome of every call at its layer and every event its instance publishes, with the
// call's context (see policy.Outcome). It replaces the observers given to the policies'
// options. Without an observer nothing is measured: a call costs what it costs with none. A later WithObserver replaces an earlier one; nil
// removes it. Default none. resilienceotel.New makes one that exports OpenTelemetry
// metrics and span events.
func WithObserver(o policy.Observer) RegistryOption {
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
		backend:   o.backend,
		presets:   map[policy.Layer]any{},
		instances: map[instanceKey]kind.Instance{},
	}
	if o.backend != nil {
		r.presets[ratelimit.Layer] = []ratelimit.Option{ratelimit.WithBackend(o.backend)}
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

// Clock returns the registry's clock; clock.System() for a nil registry.
func (r *Registry) Clock() clock.Clock {
	if r == nil {
		return clock.System()
	}
	return r.clk
}

// RateLimiter returns the read-only handle of the rate limiter with this id, once a
// function using it was wrapped or its pipeline built. An unknown id fails with
// R4C-REG-009.
func (r *Registry) RateLimiter(id string) (ratelimit.Handle, error) {
	return Lookup[ratelimit.Handle](r, ratelimit.Layer, id)
}

// CircuitBreaker returns the handle of the circuit breaker with this id; an unknown id
// fails with R4C-REG-009.
func (r *Registry) CircuitBreaker(id string) (circuitbreaker.Handle, error) {
	return Lookup[circuitbreaker.Handle](r, circuitbreaker.Layer, id)
}

// Bulkhead returns the read-only handle of the bulkhead with this id; an unknown id fails
// with R4C-REG-009.
func (r *Registry) Bulkhead(id string) (bulkhead.Handle, error) {
	return Lookup[bulkhead.Handle](r, bulkhead.Layer, id)
}

// Hedge returns the read-only handle of the hedge with this id; an unknown id fails with
// R4C-REG-009.
func (r *Registry) Hedge(id string) (hedge.Handle, error) {
	return Lookup[hedge.Handle](r, hedge.Layer, id)
}

// AdaptiveLimit returns the read-only handle of the adaptive concurrency limit with this
// id; an unknown id fails with R4C-REG-009.
func (r *Registry) AdaptiveLimit(id string) (adaptivelimit.Handle, error) {
	return Lookup[adaptivelimit.Handle](r, adaptivelimit.Layer, id)
}

// Lookup returns the instance of layer l with this id, as a P: the generic form of
// RateLimiter, CircuitBreaker and Bulkhead, for any layer, e.g.
// Lookup[*retry.Retry](r, retry.Layer, "SearchAPI.Search"). An unknown id, or an
// instance that is not a P, fails with R4C-REG-009. A nil registry fails the same way.
func Lookup[P any](r *Registry, l policy.Layer, id string) (P, error) {
	var zero P
	if r == nil {
		return zero, unknownInstance(l, id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.instances[instanceKey{l, id}].(P)
	if !ok {
		return zero, unknownInstance(l, id)
	}
	return p, nil
}

func unknownInstance(l policy.Layer, id string) error {
	return &policy.ConfigError{Code: policy.CodeUnknownInstance, Key: string(l), Value: id,
		Reason: "no instance with this id: it exists once a function using it is wrapped or its pipeline built"}
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

// Snapshot is the state of every instance of a registry, one entry per instance, sorted
// by id.
type Snapshot struct {
	RateLimiters    []ratelimit.Snapshot
	CircuitBreakers []circuitbreaker.Snapshot
	Bulkheads       []bulkhead.Snapshot
	Hedges          []hedge.Snapshot
	AdaptiveLimits  []adaptivelimit.Snapshot
	// Policies holds the state of every instance of every layer that has one (the three
	// above included), sorted by layer, then id.
	Policies []PolicySnapshot
}

// PolicySnapshot is the state of one policy instance: its layer, its id and the
// snapshot its package defines (e.g. a ratelimit.Snapshot).
type PolicySnapshot struct {
	Layer policy.Layer
	ID    string
	State any
}

// Snapshot returns the state of every instance that has one; none for a nil registry.
func (r *Registry) Snapshot() Snapshot {
	if r == nil {
		return Snapshot{RateLimiters: []ratelimit.Snapshot{}, CircuitBreakers: []circuitbreaker.Snapshot{}, Bulkheads: []bulkhead.Snapshot{},
			Hedges: []hedge.Snapshot{}, AdaptiveLimits: []adaptivelimit.Snapshot{}}
	}
	r.mu.Lock()
	keys := slices.SortedFunc(maps.Keys(r.instances), func(a, b instanceKey) int {
		return cmp.Or(cmp.Compare(a.layer, b.layer), cmp.Compare(a.id, b.id))
	})
	var out Snapshot
	for _, key := range keys {
		k, ok := kind.Lookup(key.layer)
		if !ok {
			continue
		}
		state := k.Snapshot(r.instances[key])
		if state == nil {
			continue
		}
		out.Policies = append(out.Policies, PolicySnapshot{Layer: key.layer, ID: key.id, State: state})
	}
	r.mu.Unlock()
	out.RateLimiters = statesOf[ratelimit.Snapshot](out.Policies)
	out.CircuitBreakers = statesOf[circuitbreaker.Snapshot](out.Policies)
	out.Bulkheads = statesOf[bulkhead.Snapshot](out.Policies)
	out.Hedges = statesOf[hedge.Snapshot](out.Policies)
	out.AdaptiveLimits = statesOf[adaptivelimit.Snapshot](out.Policies)
	return out
}

// statesOf returns the states of type S among ps, in their order; an empty, non-nil
// slice when there are none.
func statesOf[S any](ps []PolicySnapshot) []S {
	return lo.FilterMap(ps, func(p PolicySnapshot, _ int) (S, bool) {
		s, ok := p.State.(S)
		return s, ok
	})
}

// resolve applies the precedence of configuration keys to the settings s of one policy
// of kind d, which hold the built-in defaults: defaults.<segment>.*, then the options in
// code, then configs.<name>.<segment>.* (an unknown name is R4C-REG-004), then
// instances.<id>.<segment>.*. The instance id is the Name option or wrapID. The
// registry's clock and listeners replace those of the options. It returns where each
// value came from, for the errors of building the instance.
//
// The resolution is recorded (see record) so that Reload can make it again with other
// keys. Called with r.mu held.
func resolve[O ~func(*S), S any](r *Registry, d *kind.Descriptor[S], s *S, code []O, wrapID string) (origin, error) {
	start := *s // the built-in defaults and the registry's presets, where a reload starts again
	src, err := resolveIn(r, r.props, d, s, code, wrapID)
	if err != nil {
		return src, err
	}
	r.record(newResolution(r, d, start, code, wrapID, src.id, d.Config(s)))
	return src, nil
}

// resolveIn is resolve with the configuration keys p, recording nothing.
func resolveIn[O ~func(*S), S any](r *Registry, p *properties, d *kind.Descriptor[S], s *S, code []O, wrapID string) (origin, error) {
	segment := string(d.L)
	table := d.Table()
	src := origin{segment: segment, attrs: d.Attributes(), scopes: map[string]string{}}
	from := func(scope string) func(attr, value string) error {
		return func(attr, value string) error {
			if err := table.Set(s, attr, value); err != nil {
				return err
			}
			src.scopes[attr] = scope
			return nil
		}
	}
	if err := p.apply(scopeDefaults, segment, from(scopeDefaults)); err != nil {
		return src, err
	}
	kind.Apply(s, code)
	src.byCode = func(attr string) bool { return setByCode(d, code, attr, p.byScope[scopeDefaults][segment][attr]) }
	c := d.Common(s)
	src.id = c.Name
	if src.id == "" {
		src.id = wrapID
	}
	if c.ConfigName != "" {
		if !p.hasConfig(c.ConfigName, segment) {
			return src, &policy.ConfigError{Code: policy.CodeUnknownConfig, Key: segment + ".useConfig", Value: c.ConfigName,
				Reason: "no configuration keys configs." + shownID(c.ConfigName) + "." + segment + ".* (instance " + shownID(src.id) + ")"}
		}
		if err := p.apply(scopeConfigs+"."+c.ConfigName, segment, from(scopeConfigs+"."+c.ConfigName)); err != nil {
			return src, err
		}
	}
	if err := p.apply(scopeInstances+"."+src.id, segment, from(scopeInstances+"."+src.id)); err != nil {
		return src, err
	}
	c.InstanceID = src.id
	c.Clock = r.clk
	c.Listener = r.withListener(c.Listener)
	if r.observer != nil {
		c.Observer = r.observer
	}
	return src, nil
}

// setByCode reports whether the options code set attribute attr, so that its value is
// theirs and not value, the one the key defaults.<segment>.<attr> gave before them: on
// two settings that differ in attr only, the options leave the same configuration.
func setByCode[O ~func(*S), S any](d *kind.Descriptor[S], code []O, attr, value string) bool {
	table := d.Table()
	a, b := d.Defaults(), d.Defaults()
	if table.Set(&b, attr, value) != nil || kind.Same(d.Config(&a), d.Config(&b)) {
		return false // value is the built-in default: whoever set it, the key gives it too
	}
	kind.Apply(&a, code)
	kind.Apply(&b, code)
	return kind.Same(d.Config(&a), d.Config(&b))
}

// origin is where the settings of one policy instance came from: the scope of the
// configuration key that set each attribute.
type origin struct {
	segment string
	attrs   []string               // the segment's attributes
	id      string                 // the instance id
	scopes  map[string]string      // attribute → the scope of the key that set it last
	byCode  func(attr string) bool // whether the options in code replaced a value of defaults.
}

// keyed returns err, if it is a *policy.ConfigError about an attribute
// "<segment>.<attr>", with the whole key of that attribute: the key that set its value
// (defaults.…, configs.<name>.… or instances.<id>.…; the reason then names the instance
// when the key does not), else instances.<id>.<segment>.<attr>, the key that would set it.
func (o origin) keyed(err error) error {
	ce, ok := err.(*policy.ConfigError)
	if !ok {
		return err
	}
	attr, ok := strings.CutPrefix(ce.Key, o.segment+".")
	if !ok || !slices.Contains(o.attrs, attr) {
		return err
	}
	instance := scopeInstances + "." + o.id
	scope, set := o.scopeOf(attr)
	c := *ce
	if !set {
		scope = instance
	}
	c.Key = scope + "." + ce.Key
	if scope != instance {
		c.Reason += " (instance " + shownID(o.id) + ")"
	}
	return &c
}

// scopeOf returns the scope of the key that gave attr its value; set is false when no key
// did (the value is the options' in code, or the built-in default).
func (o origin) scopeOf(attr string) (scope string, set bool) {
	scope, set = o.scopes[attr]
	if set && scope == scopeDefaults && o.byCode != nil && o.byCode(attr) {
		return "", false // the options in code replaced the key's value
	}
	return scope, set
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
