package resilience

import (
	"reflect"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Spec is one element of a composition, as given to Wrap or NewPipeline: a policy
// (RateLimiter, Retry, …, or a user's policy through Use), or the order of the layers
// (Order). Specs may be given in any order; each layer may appear once.
type Spec interface {
	// layer is the spec's layer; "" for Order.
	layer() policy.Layer
	// build resolves the spec's configuration and finds or builds its instance. It returns
	// the instance and, for an instance that is new, the function that registers it; the
	// caller runs those only once every spec of the composition has been built, so a
	// failed wrap leaves nothing behind. Called with r.mu held. result is the wrapped
	// function's result type.
	build(r *Registry, wrapID string, result reflect.Type) (inst any, register func(), err error)
}

// policyOf is the spec of the registered policy kind whose options are O, functions of
// its settings S. An unregistered kind has no layer, and fails the wrap.
func policyOf[O ~func(*S), S any](opts []O) policySpec[O, S] {
	sp := policySpec[O, S]{opts: opts}
	if d, ok := contract.DescriptorOf[S](); ok {
		sp.l = d.L
	}
	return sp
}

// policySpec is the spec of every registered policy kind.
type policySpec[O ~func(*S), S any] struct {
	l      policy.Layer
	opts   []O
	locked bool // the values opts set win over every configuration key (see Locked)
}

func (sp policySpec[O, S]) layer() policy.Layer { return sp.l }

// descriptor returns the spec's descriptor.
func (sp policySpec[O, S]) descriptor() (*contract.Descriptor[S], error) {
	d, ok := contract.DescriptorOf[S]()
	if !ok {
		return nil, r4c.Errorf(r4c.BadSpec, "", "", "no policy is registered for options of type %v", reflect.TypeFor[O]())
	}
	return d, nil
}

// settings resolves the spec's settings for a composition of wrapID whose result type is
// result, with the precedence of configuration keys: the built-in defaults, the
// registry's presets, defaults.<segment>.*, the options in code, configs.<name>.*, then
// instances.<id>.* (for a locked spec, the options in code last). It returns the descriptor, the settings and where they came from,
// with the instance id.
func (sp policySpec[O, S]) settings(r *Registry, wrapID string, result reflect.Type) (*contract.Descriptor[S], S, origin, error) {
	var s S
	d, err := sp.descriptor()
	if err != nil {
		return nil, s, origin{}, err
	}
	s = d.Defaults()
	if pre, ok := r.presets[sp.l].([]O); ok {
		contract.Apply(&s, pre)
	}
	src, err := resolve(r, d, &s, sp.opts, wrapID, sp.locked)
	if err != nil {
		return nil, s, src, err
	}
	if d.Result != nil {
		if t := d.Result(&s); t != nil && t != result {
			return nil, s, src, r4c.Errorf(r4c.BadSpec, string(sp.l), wrapID,
				"the %s's result predicate takes %v but the function returns %v", sp.l, t, result)
		}
	}
	return d, s, src, nil
}

func (sp policySpec[O, S]) build(r *Registry, wrapID string, result reflect.Type) (any, func(), error) {
	d, s, src, err := sp.settings(r, wrapID, result)
	if err != nil {
		return nil, nil, err
	}
	id := src.id
	key := instanceKey{sp.l, id}
	if p, ok := r.instances[key]; ok {
		if have, want := d.Of(p), d.Config(&s); !contract.Same(have, want) {
			if !src.named && !r.named[key] { // no Name: the same id, wrapped twice
				return nil, nil, r4c.Errorf(r4c.Conflict, string(sp.l), id,
					"the id %s is wrapped twice with different settings (the first wrap's vs this one's): %s; "+
						"the wraps of one id share its instances: give them the same settings, or each its own id",
					shownID(id), contract.Difference(have, want))
			}
			return nil, nil, r4c.Errorf(r4c.Conflict, string(sp.l), id,
				"functions that share this name resolve different configurations (the instance's vs %s's): %s",
				shownID(wrapID), contract.Difference(have, want))
		}
		return p, nil, nil
	}
	p, err := d.Build(s)
	if err != nil {
		return nil, nil, src.keyed(err) // the whole key of the value, e.g. instances.<id>.rateLimiter.period
	}
	return p, func() {
		r.instances[key] = p
		if src.named {
			r.named[key] = true
		}
	}, nil
}
