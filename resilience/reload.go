package resilience

import (
	"cmp"
	"maps"
	"slices"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Reload replaces the registry's configuration keys with props (merged as WithProperties
// merges them: for a key given twice the later map wins; no map at all removes every
// key) and applies them to the running instances, all or nothing.
//
// First it checks everything, changing nothing: every key as NewRegistry does (R4C-CFG-001
// for an unknown key, the attribute's code for a bad value); then it resolves again the
// configuration of every policy of every wrapped function and pipeline, with the
// precedence of the keys as when they were built (built-in defaults, defaults.<policy>.*,
// the options in code, configs.<name>.*, instances.<id>.*: the options in code still win
// over defaults.* keys and lose to the other two, but a Locked spec's win over all of them),
// which fails for an unknown
// configs.<name> (R4C-REG-004) or a value out of range (its R4C-ATR or R4C-REG-001
// code); functions that share an instance by name must still resolve one configuration
// (R4C-REG-008); and each instance whose configuration changes must be able to take it,
// which its policy checks without applying anything: a setting that cannot change on a
// running instance fails with R4C-REG-012. The error is a *policy.ConfigError whose Key is the whole configuration
// key, e.g. instances.SearchAPI.Search.rateLimiter.permits. On an error nothing changes:
// not an instance, not the keys that instances built later will use.
//
// Then it applies the new configuration to each instance whose configuration changed,
// with its Reconfigure: from the instance's next call, calls in progress keeping what
// they started with, as each policy's Reconfigure details. Each such instance publishes
// a ConfigChanged event naming the attributes that changed; the registry's listeners
// receive them, and any event the change sets off (a breaker's transition), on the
// goroutine that called Reload, before it returns, with the registry unlocked (so they may
// look instances up); so do the EventLockedOverride events of the keys that Locked specs
// now ignore, after the changes. Instances built afterwards, and functions wrapped afterwards that
// share an instance by name, resolve the new keys.
//
// What changes live, by configuration attribute:
//   - rateLimiter: permits, period, maxWait, enabled (a limiter keeps its backend, which
//     is not a configuration key);
//   - circuitBreaker: every attribute but slidingWindowType;
//   - bulkhead: maxConcurrent, maxWait, priorityReserve; not enabled;
//   - retry: every attribute (maxAttempts, delay, multiplier, maxDelay, jitter,
//     waitForPermit, enabled);
//   - timeout: duration, enabled;
//   - retryBudget: every attribute (ratio, minPerSecond, window, enabled);
//   - chaos: every attribute (enabled, rate, latency);
//   - throttle: every attribute (k, window, maxRejection, enabled).
//
// What does not, and fails the whole reload with R4C-REG-012 when the keys would change
// it: circuitBreaker.slidingWindowType, bulkhead.enabled, every attribute of a hedge, of
// an adaptive limit and of a fallback (they keep the configuration they were built with),
// and the order of a composition already built (defaults.composition.order or
// instances.<id>.composition.order, when the composition read or looked for that key).
// What is set in code only (error lists, result predicates, a backend) is resolved again
// from the same options, so a reload never changes it.
//
// A user's policy (Use) has no configuration keys: a reload leaves it alone.
//
// Reloads run one at a time, and a Wrap or NewPipeline waits while a Reload checks and
// applies, so that the two never interleave; calls through wrapped functions go on
// meanwhile. What a change starts on the Reload's goroutine (a listener, a call that a
// raised bulkhead lets start) must not wrap functions on the registry.
// Its work is linear in the number of keys and of the specs wrapped so far. A nil
// registry fails with R4C-REG-010. A listener of the registry must not call Reload.
func (r *Registry) Reload(props ...map[string]string) error {
	if r == nil {
		return r4c.Errorf(r4c.BadSpec, "", "", "the registry is nil: make one with NewRegistry")
	}
	merged := map[string]string{}
	for _, p := range props {
		maps.Copy(merged, p)
	}
	next, err := newProperties(merged)
	if err != nil {
		return err
	}
	r.reloadMu.Lock()
	defer r.reloadMu.Unlock()
	changes, events, err := r.swap(next)
	if err != nil {
		return err
	}
	defer r.publish(events) // the overrides that locked specs now ignore, after the changes
	// Outside the registry's lock, so that what a change sets off (its events, a
	// bulkhead's waiting calls that start) may look instances up; builds wait on reloadMu.
	for _, c := range changes {
		// The check accepted c, so Reconfigure does not fail, unless the instance was
		// reconfigured directly since: then its error is returned, and the instances
		// before it keep their new configuration, as the keys do.
		if err := c.Apply(); err != nil {
			return err
		}
	}
	return nil
}

// swap checks next against every running instance and, when all is well, makes it the
// registry's keys and returns the changes to apply, with the events of the overrides
// that locked specs ignore anew.
func (r *Registry) swap(next *properties) ([]contract.LiveChange, []policy.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changes, err := r.plan(next)
	if err != nil {
		return nil, nil, err
	}
	for u, res := range r.props.applied {
		if u.n != 0 || u.segment == compositionSegment {
			next.applied[u] = res // the resolutions, and the orders looked for
		}
	}
	r.props = next
	return changes, r.relock(), nil
}

// plan checks next, the keys of a reload, against every recorded resolution and running
// instance, and returns the changes to apply, in the order the instances were built; an
// error when any check fails. It changes nothing. Called with r.mu held.
func (r *Registry) plan(next *properties) ([]contract.LiveChange, error) {
	if err := r.sameOrders(next); err != nil {
		return nil, err
	}
	type group struct {
		first *resolution // the first function that built the instance
		res   resolved    // its new resolution
		inst  contract.Instance
	}
	groups := map[instanceKey]*group{}
	var order []instanceKey
	for _, rec := range r.resolutionsMade() {
		res, err := rec.again(next)
		if err != nil {
			return nil, err
		}
		key := instanceKey{rec.layer, rec.id}
		inst, kept := r.instances[key]
		if !kept { // built for its composition alone (a fallback): it keeps its configuration
			if !contract.Same(rec.built, res.config) {
				return nil, r.notLive(rec, res, next)
			}
			continue
		}
		if g, ok := groups[key]; ok {
			if !contract.Same(g.res.config, res.config) {
				key, value := r.conflictKey(g.first, rec, g.res, res, next)
				if key == "" {
					key, value = string(rec.layer), rec.id
				}
				return nil, r4c.Errorf(r4c.Conflict, key, value,
					"functions that share the %s %s would resolve different configurations (%s's vs %s's): %s",
					rec.layer, shownID(rec.id), shownID(g.first.wrapID), shownID(rec.wrapID), contract.Difference(g.res.config, res.config))
			}
			continue
		}
		groups[key] = &group{first: rec, res: res, inst: inst}
		order = append(order, key)
	}
	var changes []contract.LiveChange
	for _, key := range order {
		g := groups[key]
		if contract.Same(g.res.of(g.inst), g.res.config) {
			continue
		}
		if err := g.res.validate(); err != nil {
			return nil, err
		}
		c, ok := liveChangeOf(key.layer, g.inst, g.res.config)
		if !ok {
			return nil, r.notLive(g.first, g.res, next)
		}
		if err := c.Check(); err != nil {
			return nil, g.res.src.keyed(err)
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// conflictKey returns the key of the reload next that gives the resolutions ra and rb of
// one shared instance different configurations (a and b, made with next), and its value:
// the first attribute, in the kind's order, whose value one of them takes from a key that
// next adds or changes, and without whose change they would agree. When no one key is
// the cause, the first such key; "" when there is none (a key removed: each then takes
// its value from elsewhere). Called with r.mu held; it changes nothing.
func (r *Registry) conflictKey(ra, rb *resolution, a, b resolved, next *properties) (key, value string) {
	seg := a.src.segment
	for _, attr := range a.src.attrs {
		for _, src := range []origin{a.src, b.src} {
			scope, set := src.scopeOf(attr)
			if !set {
				continue
			}
			was, had := r.props.byScope[scope][seg][attr]
			now := next.byScope[scope][seg][attr]
			if had && was == now {
				continue
			}
			if key == "" {
				key, value = scope+"."+seg+"."+attr, now
			}
			if r.agreeWithout(ra, rb, next, scope, seg, attr, was, had) {
				return scope + "." + seg + "." + attr, now
			}
		}
	}
	return key, value
}

// agreeWithout reports whether ra and rb resolve one configuration with the keys next
// but for scope.seg.attr, which has its value before the reload (was, or none when !had).
func (r *Registry) agreeWithout(ra, rb *resolution, next *properties, scope, seg, attr, was string, had bool) bool {
	attrs := maps.Clone(next.byScope[scope][seg])
	if had {
		attrs[attr] = was
	} else {
		delete(attrs, attr)
	}
	segs := maps.Clone(next.byScope[scope])
	segs[seg] = attrs
	byScope := maps.Clone(next.byScope)
	byScope[scope] = segs
	trial := scratch(byScope) // marks nothing in next
	a, errA := ra.again(trial)
	b, errB := rb.again(trial)
	return errA == nil && errB == nil && contract.Same(a.config, b.config)
}

// resolution is how the settings of one policy of one composition were resolved: enough
// to resolve them again with other configuration keys.
type resolution struct {
	layer  policy.Layer
	id     string // the instance id
	wrapID string // the id of the wrapped function or pipeline
	built  any    // the configuration resolved when the composition was built
	locked bool   // the spec is locked: its options in code win over every key
	// ignored are the keys the options in code overruled when the composition was built
	// (see origin.ignored).
	ignored map[string]*policy.ConfigError
	// again resolves the settings with the keys p, from the same defaults, presets and
	// options in code; it marks in p the keys it uses.
	again func(p *properties) (resolved, error)
}

// resolved is one resolution made again.
type resolved struct {
	config   any                         // the configuration, as the kind's descriptor compares it
	src      origin                      // where its values came from
	validate func() error                // checks its ranges, with whole keys; nil error when it has no check
	of       func(contract.Instance) any // an instance's configuration, as config is
}

// newResolution returns the resolution of the settings of a policy of kind d for the
// composition of wrapID, from start (the built-in defaults and the registry's presets) and
// the options code, that gave the instance id and the configuration built.
func newResolution[O ~func(*S), S any](r *Registry, d *contract.Descriptor[S], start S, code []O, wrapID string, src origin, built any, locked bool) *resolution {
	return &resolution{layer: d.L, id: src.id, wrapID: wrapID, built: built, locked: locked, ignored: src.ignored, again: func(p *properties) (resolved, error) {
		s := start
		src, err := resolveIn(r, p, d, &s, code, wrapID, locked)
		if err != nil {
			return resolved{}, err
		}
		return resolved{
			config: d.Config(&s),
			src:    src,
			validate: func() error {
				if d.Validate == nil {
					return nil // checked by the instance's CheckReconfigure
				}
				if err := d.Validate(&s); err != nil {
					return src.keyed(err)
				}
				return nil
			},
			of: d.Of,
		}, nil
	}}
}

// record keeps res among the resolutions of r.props, numbered after the others. A failed
// wrap forgets it with the rest of what it used. Called with r.mu held.
func (r *Registry) record(res *resolution) {
	r.resolutions++
	r.props.mark(use{n: r.resolutions}, res)
}

// resolutionsMade returns the resolutions of the functions and pipelines wrapped so far,
// in the order they were made. Called with r.mu held.
func (r *Registry) resolutionsMade() []*resolution {
	uses := slices.SortedFunc(maps.Keys(r.props.applied), func(a, b use) int { return cmp.Compare(a.n, b.n) })
	var out []*resolution
	for _, u := range uses {
		if u.n != 0 {
			out = append(out, r.props.applied[u])
		}
	}
	return out
}

// sameOrders refuses, with R4C-REG-012, keys that change the order of a composition
// already built: a key composition.order that a composition read or looked for (in
// sorted order of the keys, the first such key). Called with r.mu held.
func (r *Registry) sameOrders(next *properties) error {
	var scopes []string
	for u := range r.props.applied {
		if u.n == 0 && u.segment == compositionSegment {
			scopes = append(scopes, u.scope)
		}
	}
	slices.Sort(scopes)
	for _, scope := range scopes {
		was, had := r.props.byScope[scope][compositionSegment][orderAttr]
		now, has := next.byScope[scope][compositionSegment][orderAttr]
		if had == has && sameOrder(was, now) {
			continue
		}
		reason := "the order of a composition is fixed when its function is wrapped or its pipeline built: it cannot change on a running registry"
		if !has {
			reason += " (this key is removed)"
		}
		return r4c.Errorf(r4c.NotLive, scope+"."+orderKey, now, "%s", reason)
	}
	return nil
}

// sameOrder reports whether two values of a composition.order key, both valid, name the
// same order.
func sameOrder(a, b string) bool {
	la, _ := parseOrder(a)
	lb, _ := parseOrder(b)
	return slices.Equal(la, lb)
}

// notLive is the R4C-REG-012 of a policy of a kind whose configuration cannot change on a
// running instance, when res, the resolution rec made again with the keys next, changes
// it: its key is the first attribute, in the kind's order, whose key or value changes.
func (r *Registry) notLive(rec *resolution, res resolved, next *properties) error {
	now := scratch(r.props.byScope) // marks nothing in r.props
	was, err := rec.again(now)
	if err != nil {
		was.src = origin{} // resolved before, so not expected; then no attribute is named
	}
	key, value := string(rec.layer), ""
	for _, attr := range res.src.attrs {
		oldScope, oldSet := was.src.scopeOf(attr)
		newScope, newSet := res.src.scopeOf(attr)
		oldValue := now.byScope[oldScope][res.src.segment][attr]
		newValue := next.byScope[newScope][res.src.segment][attr]
		if oldSet == newSet && oldScope == newScope && oldValue == newValue {
			continue
		}
		if newSet {
			key, value = newScope+"."+res.src.segment+"."+attr, newValue
		} else {
			key = oldScope + "." + res.src.segment + "." + attr // the key removed
		}
		break
	}
	what := "a " + string(rec.layer)
	if _, kept := r.instances[instanceKey{rec.layer, rec.id}]; !kept {
		what += " of " + shownID(rec.wrapID) // one per composition
	} else {
		what += " (instance " + shownID(rec.id) + ")"
	}
	return r4c.Errorf(r4c.NotLive, key, value,
		"%s keeps the configuration it was built with: its %s settings cannot change on a running instance", what, rec.layer)
}

// liveChangeOf returns the change of inst, an instance of layer l, to cfg, a
// configuration as its kind's descriptor compares it; false when inst cannot change live
// (its descriptor has no Live).
func liveChangeOf(l policy.Layer, inst contract.Instance, cfg any) (contract.LiveChange, bool) {
	live := contract.CompositionOf(l).Live
	if live == nil {
		return contract.LiveChange{}, false
	}
	return live(inst, cfg)
}
