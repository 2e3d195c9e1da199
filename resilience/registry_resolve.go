package resilience

import (
	"slices"
	"strings"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// resolve applies the precedence of configuration keys to the settings s of one policy
// of kind d, which hold the built-in defaults: defaults.<segment>.*, then the options in
// code, then configs.<name>.<segment>.* (an unknown name is R4C-REG-004), then
// instances.<id>.<segment>.*. The instance id is the Name option or wrapID. The
// registry's clock and listeners replace those of the options. It returns where each
// value came from, for the errors of building the instance.
//
// The resolution is recorded (see record) so that Reload can make it again with other
// keys. Called with r.mu held.
//
// For a locked spec (see Locked) the options in code come last, after every key: the
// values they set win, and each key of configs.<name> or instances.<id> they overrule is
// in the origin's ignored.
func resolve[O ~func(*S), S any](r *Registry, d *contract.Descriptor[S], s *S, code []O, wrapID string, locked bool) (origin, error) {
	start := *s // the built-in defaults and the registry's presets, where a reload starts again
	src, err := resolveIn(r, r.props, d, s, code, wrapID, locked)
	if err != nil {
		return src, err
	}
	r.record(newResolution(r, d, start, code, wrapID, src, d.Config(s), locked))
	return src, nil
}

// resolveIn is resolve with the configuration keys p, recording nothing.
func resolveIn[O ~func(*S), S any](r *Registry, p *properties, d *contract.Descriptor[S], s *S, code []O, wrapID string, locked bool) (origin, error) {
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
	src.byCode = func(attr string) bool { return setByCode(d, code, attr, p.byScope[scopeDefaults][segment][attr]) }
	named := s // what the options in code make of the settings: their name and configuration
	if locked {
		probe := *s
		named = &probe
	}
	contract.Apply(named, code)
	c := d.Common(named)
	src.id, src.named = c.Name, c.Name != ""
	if !src.named {
		src.id = wrapID
	}
	scopes := []string{scopeInstances + "." + src.id}
	if c.ConfigName != "" {
		if !p.hasConfig(c.ConfigName, segment) {
			return src, &policy.ConfigError{Code: r4c.UnknownConfig, Key: segment + ".useConfig", Value: c.ConfigName,
				Reason: "no configuration keys configs." + shownID(c.ConfigName) + "." + segment + ".* (instance " + shownID(src.id) + ")"}
		}
		scopes = append([]string{scopeConfigs + "." + c.ConfigName}, scopes...)
	}
	for _, scope := range scopes {
		if err := p.apply(scope, segment, from(scope)); err != nil {
			return src, err
		}
	}
	if locked {
		contract.Apply(s, code)
		src.ignored = overruled(d, s, p, scopes, src.id)
		c = d.Common(s)
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
func setByCode[O ~func(*S), S any](d *contract.Descriptor[S], code []O, attr, value string) bool {
	table := d.Table()
	a, b := d.Defaults(), d.Defaults()
	if table.Set(&b, attr, value) != nil || contract.Same(d.Config(&a), d.Config(&b)) {
		return false // value is the built-in default: whoever set it, the key gives it too
	}
	contract.Apply(&a, code)
	contract.Apply(&b, code)
	return contract.Same(d.Config(&a), d.Config(&b))
}

// origin is where the settings of one policy instance came from: the scope of the
// configuration key that set each attribute.
type origin struct {
	segment string
	attrs   []string               // the segment's attributes
	id      string                 // the instance id
	named   bool                   // the id is the Name option's, not the wrapped function's
	scopes  map[string]string      // attribute → the scope of the key that set it last
	byCode  func(attr string) bool // whether the options in code replaced a value of defaults.
	// ignored lists, for a locked spec, the keys of configs.<name> and instances.<id> that
	// the options in code overruled, as R4C-CFG-014 errors by attribute.
	ignored map[string]*policy.ConfigError
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
	if _, overruled := o.ignored[attr]; overruled {
		return "", false // the options in code of a locked spec replaced the key's value
	}
	if set && scope == scopeDefaults && o.byCode != nil && o.byCode(attr) {
		return "", false // the options in code replaced the key's value
	}
	return scope, set
}
