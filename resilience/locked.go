package resilience

import (
	"cmp"
	"log/slog"
	"maps"
	"reflect"
	"slices"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Locked returns spec with the values its options set in code locked: they win over the
// configuration keys configs.<name>.<policy>.* and instances.<id>.<policy>.*, which
// otherwise win over code, when the function is wrapped and at every Reload. What the
// options leave unset still comes from the keys, with the usual precedence: built-in
// defaults, defaults.<policy>.*, configs.<name>.<policy>.*, instances.<id>.<policy>.*, then
// the options in code. Each configs.<name>. or instances.<id>. key that a locked value
// overrules is an ignored override (a defaults. key, below the code anyway, is not; nor
// is a configs.<name>. key that an instances.<id>. key hides): the registry lists it
// (LockedOverrides) and reports it once, as an EventLockedOverride event to its
// listeners, when it is first ignored (the wrap that builds the instance, or the Reload
// that adds or changes the key, or removes the instances.<id>. key that hid it).
//
// spec must be a policy's spec (RateLimiter, Retry, Timeout, …, Fallback); any other
// (Order, Use, nil) fails the wrap with R4C-REG-010.
func Locked(spec Spec) Spec {
	if l, ok := spec.(interface{ lock() Spec }); ok {
		return l.lock()
	}
	return unlockable{spec}
}

// EventLockedOverride ("LockedOverrideIgnored") is the kind of event a registry publishes
// to its listeners for a configuration key that the options in code of a Locked spec
// overrule, once per key and instance while the key keeps its value: Instance is the
// instance id and Err the *policy.ConfigError of code R4C-CFG-014 whose Key is the whole
// configuration key and Value its value. It is logged at slog.LevelWarn and makes no span
// event.
var EventLockedOverride = policy.RegisterEventKind(policy.EventKindInfo{Name: "LockedOverrideIgnored", Level: slog.LevelWarn})

// LockedOverrides returns the configuration keys that the options in code of Locked specs
// overrule now, one *policy.ConfigError of code R4C-CFG-014 per key and instance, sorted
// by key: its Key is the whole key (e.g. instances.SearchAPI.Search.retry.maxAttempts),
// its Value the key's value, and its Reason names the instance. Nil for a nil registry
// or when no key is overruled. It is safe for concurrent use.
func (r *Registry) LockedOverrides() []*policy.ConfigError {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*policy.ConfigError
	for _, ce := range r.overruled {
		c := *ce
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *policy.ConfigError) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

func (sp policySpec[O, S]) lock() Spec {
	sp.locked = true
	return sp
}

// unlockable is Locked of a spec that is not a policy's: it fails the wrap.
type unlockable struct{ spec Spec }

func (u unlockable) layer() policy.Layer {
	if u.spec == nil {
		return ""
	}
	return u.spec.layer()
}

func (u unlockable) build(_ *Registry, wrapID string, _ reflect.Type) (any, func(), error) {
	what := "a nil spec"
	if u.spec != nil {
		what = "a spec of type " + reflect.TypeOf(u.spec).String()
	}
	return nil, nil, r4c.Errorf(r4c.BadSpec, "locked", wrapID, "Locked takes the spec of a policy layer, not %s", what)
}

// overruled returns the keys of scopes (configs.<name> and instances.<id>, lowest
// precedence first) that the options in code of a locked spec overrule in s, its settings
// resolved for the instance id, by attribute: those that would change its configuration
// were they applied last. A key that a later scope overrides is not overruled by code.
func overruled[S any](d *contract.Descriptor[S], s *S, p *properties, scopes []string, id string) map[string]*policy.ConfigError {
	segment := string(d.L)
	table := d.Table()
	var out map[string]*policy.ConfigError
	for i, scope := range scopes {
		attrs := p.byScope[scope][segment]
		for _, attr := range slices.Sorted(maps.Keys(attrs)) {
			later := false
			for _, after := range scopes[i+1:] {
				_, set := p.byScope[after][segment][attr]
				later = later || set
			}
			t := *s
			if later || table.Set(&t, attr, attrs[attr]) != nil || contract.Same(d.Config(&t), d.Config(s)) {
				continue
			}
			if out == nil {
				out = map[string]*policy.ConfigError{}
			}
			out[attr] = r4c.Errorf(r4c.LockedOverride, scope+"."+segment+"."+attr, attrs[attr],
				"ignored: the %s of instance %s is locked, and its options in code set %s", segment, shownID(id), attr)
		}
	}
	return out
}

// overruledKey names an ignored override: the instance and the whole key.
type overruledKey struct {
	instanceKey
	key string
}

// noteOverruled adds to the registry's ignored overrides those of the resolutions res,
// and returns the events of the ones that before did not hold with the same value.
// Called with r.mu held.
func (r *Registry) noteOverruled(res []*resolution, before map[overruledKey]*policy.ConfigError) []policy.Event {
	var events []policy.Event
	for _, rec := range res {
		for _, attr := range slices.Sorted(maps.Keys(rec.ignored)) {
			ce := rec.ignored[attr]
			k := overruledKey{instanceKey{rec.layer, rec.id}, ce.Key}
			was, known := before[k]
			if r.overruled == nil {
				r.overruled = map[overruledKey]*policy.ConfigError{}
			}
			r.overruled[k] = ce
			if !known || was.Value != ce.Value {
				events = append(events, policy.Event{Kind: EventLockedOverride, Instance: rec.id, Err: ce})
			}
		}
	}
	return events
}

// added returns the resolutions recorded since the keys last forgot what they added (see
// properties.forget): a wrap's. Called with r.mu held.
func (r *Registry) added() []*resolution {
	var out []*resolution
	for _, u := range r.props.added {
		if u.n != 0 {
			out = append(out, r.props.applied[u])
		}
	}
	return out
}

// relock resolves every locked spec again with the registry's keys and makes their
// ignored overrides the registry's, returning the events of those it did not hold with
// the same value. Called with r.mu held, after a reload swapped the keys.
func (r *Registry) relock() []policy.Event {
	var again []*resolution
	for _, rec := range r.resolutionsMade() {
		if !rec.locked {
			continue
		}
		res, err := rec.again(scratch(r.props.byScope)) // marks nothing in r.props
		if err != nil {
			continue // checked by the reload's plan, so not expected
		}
		c := *rec
		c.ignored = res.src.ignored
		again = append(again, &c)
	}
	old := r.overruled
	r.overruled = nil
	return r.noteOverruled(again, old)
}

// publish sends events to the registry's listeners, stamped with its clock. Called
// without r.mu held.
func (r *Registry) publish(events []policy.Event) {
	if r.listener == nil {
		return
	}
	for _, e := range events {
		e.At = r.clk.Now()
		r.listener(e)
	}
}
