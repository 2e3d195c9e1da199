package resilience

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// The three scopes of configuration keys, lowest precedence first.
const (
	scopeDefaults  = "defaults"
	scopeConfigs   = "configs"
	scopeInstances = "instances"
)

// The configuration of a composition itself: the key <scope>.composition.order, for the
// scopes defaults and instances.<id>.
const (
	compositionSegment = "composition"
	orderAttr          = "order"
	orderKey           = compositionSegment + "." + orderAttr
)

// segment is one segment of configuration keys: its attributes and how a value's syntax
// is checked.
type segment struct {
	attributes []string
	check      func(attr, value string) error
}

// segments returns every segment of configuration keys: one per registered policy kind,
// and the composition's.
func segments() map[string]segment {
	out := lo.SliceToMap(contract.All(), func(k contract.Kind) (string, segment) {
		return string(k.Layer()), segment{k.Attributes(), k.Check}
	})
	out[compositionSegment] = segment{[]string{orderAttr}, func(_, v string) error {
		_, err := parseOrder(v)
		return err
	}}
	return out
}

// properties is a validated set of configuration keys, indexed by scope
// ("defaults", "configs.<name>" or "instances.<id>") and policy segment.
type properties struct {
	byScope map[string]map[string]map[string]string // scope → segment → attribute → value
	// applied records what the instances built so far used: each scope and segment whose
	// keys they read (or, for a composition's order, looked for), and each resolution of a
	// spec's settings, so that Reload can resolve them again. Guarded by the registry's
	// lock.
	applied map[use]*resolution
	// added lists the uses that applied did not hold before, since forget last emptied
	// it: a failed wrap forgets them (assembleWith), so that it uses no key, in time
	// linear in what it used rather than in what every wrap before it used.
	added []use
}

// scratch returns properties of the keys byScope whose uses are recorded apart: resolving
// with them marks nothing in the registry's.
func scratch(byScope map[string]map[string]map[string]string) *properties {
	return &properties{byScope: byScope, applied: map[use]*resolution{}}
}

// mark records u in applied, with res, and in added when it is new.
func (p *properties) mark(u use, res *resolution) {
	if _, ok := p.applied[u]; !ok {
		p.added = append(p.added, u)
	}
	p.applied[u] = res
}

// forget removes from applied the uses added since the last forget when undo is true,
// and empties added.
func (p *properties) forget(undo bool) {
	if undo {
		for _, u := range p.added {
			delete(p.applied, u)
		}
	}
	clear(p.added)
	p.added = p.added[:0]
}

// use is a key of properties.applied: a scope and segment that an instance used (n 0, no
// resolution), or the resolution numbered n ≥ 1, in the order they were made.
type use struct {
	scope, segment string
	n              int
}

// parseKey splits a configuration key into its scope ("defaults", "configs.<name>",
// "instances.<id>"), policy segment and attribute. Names and ids may contain dots, so the
// key is read from the right.
func parseKey(key string) (scope, segment, attr string, ok bool) {
	return parseKeyIn(segments(), key)
}

// parseKeyIn is parseKey with the segments given.
func parseKeyIn(segs map[string]segment, key string) (scope, segment, attr string, ok bool) {
	last := strings.LastIndexByte(key, '.')
	if last <= 0 {
		return "", "", "", false
	}
	attr = key[last+1:]
	rest := key[:last]
	prev := strings.LastIndexByte(rest, '.')
	if prev <= 0 {
		return "", "", "", false
	}
	segment, scope = rest[prev+1:], rest[:prev]
	seg, known := segs[segment]
	if !known || !slices.Contains(seg.attributes, attr) {
		return "", "", "", false
	}
	if segment == compositionSegment && strings.HasPrefix(scope, scopeConfigs+".") {
		return "", "", "", false // no spec selects a configuration for the composition
	}
	if strings.Contains(key, "..") || strings.HasSuffix(scope, ".") {
		return "", "", "", false // an empty name or id
	}
	switch {
	case scope == scopeDefaults:
	case strings.HasPrefix(scope, scopeConfigs+".") && len(scope) > len(scopeConfigs)+1:
	case strings.HasPrefix(scope, scopeInstances+".") && len(scope) > len(scopeInstances)+1:
	default:
		return "", "", "", false
	}
	return scope, segment, attr, true
}

// newProperties validates every key and value of props: an unknown key is R4C-CFG-001
// (saying what is wrong with it, or naming the closest valid key), a value of the wrong
// syntax the attribute's code (R4C-ATR-001, -005, -006, -007); then the values of each
// policy in the scopes defaults and configs.<name>, over the built-in defaults, are
// checked for range as the policy checks them (see contract.Kind.CheckRange). The error's Key
// is the whole configuration key. Of several errors, the one of the first key in sorted
// order is reported, syntax before range. The work is linear in the size of props.
func newProperties(props map[string]string) (*properties, error) {
	p := &properties{byScope: map[string]map[string]map[string]string{}, applied: map[use]*resolution{}}
	segs := segments()
	var bad string // the first key, in sorted order, whose key or value is wrong
	var badErr error
	for key, value := range props {
		if badErr != nil && key > bad {
			continue
		}
		scope, segment, attr, ok := parseKeyIn(segs, key)
		var err error
		switch {
		case !ok:
			err = errUnknownKey // its message is made once, for the key reported
		default:
			err = segs[segment].check(attr, value)
			if err == nil && scope == scopeDefaults && segment == compositionSegment {
				err = builtInOnly(value)
			}
		}
		if err != nil {
			bad, badErr = key, err
			continue
		}
		if p.byScope[scope] == nil {
			p.byScope[scope] = map[string]map[string]string{}
		}
		if p.byScope[scope][segment] == nil {
			p.byScope[scope][segment] = map[string]string{}
		}
		p.byScope[scope][segment][attr] = value
	}
	switch {
	case badErr == errUnknownKey:
		return nil, unknownKey(segs, bad)
	case badErr != nil:
		return nil, withKey(badErr, bad)
	}
	if err := p.checkRanges(); err != nil {
		return nil, err
	}
	return p, nil
}

// errUnknownKey marks, in newProperties, a key that parseKey refuses.
var errUnknownKey = errors.New("unknown configuration key")

// checkRanges checks the values that the scopes defaults and configs.<name> give each
// policy, over its built-in defaults, as the policy checks a configuration: R4C-ATR-002,
// -003, -004, -007 or R4C-REG-001 with the whole key. A value that the policy cannot
// check without an attribute the scope leaves to other sources (e.g. rateLimiter.maxWait
// without rateLimiter.permits, which has no default) is checked when the instance is
// built. The keys of instances.<id> are checked then too, with the options in code.
func (p *properties) checkRanges() error {
	var bad string
	var badErr error
	for scope, segs := range p.byScope {
		if scope != scopeDefaults && !strings.HasPrefix(scope, scopeConfigs+".") {
			continue
		}
		for segment, attrs := range segs {
			k, ok := contract.Lookup(policy.Layer(segment))
			if !ok {
				continue // the composition's order, checked with its syntax
			}
			attr, err := k.CheckRange(attrs)
			if err == nil {
				continue
			}
			if key := scope + "." + segment + "." + attr; badErr == nil || key < bad {
				bad, badErr = key, err
			}
		}
	}
	if badErr != nil {
		return withKey(badErr, bad)
	}
	return nil
}

// hasConfig reports whether any key names configs.<name>.<segment>.
func (p *properties) hasConfig(name, segment string) bool {
	_, ok := p.byScope[scopeConfigs+"."+name][segment]
	return ok
}

// value returns the value of the key <scope>.<segment>.<attr>, and marks its scope and
// segment used, whether the key is there or not: a reload that adds the key changes what
// the caller read.
func (p *properties) value(scope, segment, attr string) (string, bool) {
	v, ok := p.byScope[scope][segment][attr]
	p.mark(use{scope: scope, segment: segment}, nil)
	return v, ok
}

// apply sets every attribute of scope's segment with set, in attribute order.
func (p *properties) apply(scope, segment string, set func(attr, value string) error) error {
	p.mark(use{scope: scope, segment: segment}, nil)
	attrs := p.byScope[scope][segment]
	for _, attr := range slices.Sorted(maps.Keys(attrs)) {
		if err := set(attr, attrs[attr]); err != nil {
			return withKey(err, scope+"."+segment+"."+attr)
		}
	}
	return nil
}

// unused returns, sorted, the keys whose scope and segment no instance has used so far.
func (p *properties) unused() []string {
	var keys []string
	for scope, segs := range p.byScope {
		for segment, attrs := range segs {
			if _, ok := p.applied[use{scope: scope, segment: segment}]; ok {
				continue
			}
			for attr := range attrs {
				keys = append(keys, scope+"."+segment+"."+attr)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// withKey returns err, a *policy.ConfigError, with its Key set to key.
func withKey(err error, key string) error {
	return edited(err, func(c *policy.ConfigError) { c.Key = key })
}

// withValue returns err, a *policy.ConfigError, with its Value set to v.
func withValue(err error, v string) error {
	return edited(err, func(c *policy.ConfigError) { c.Value = v })
}

// edited returns a copy of err, a *policy.ConfigError, changed by edit; any other err
// (one that only wraps a *policy.ConfigError too) as it is.
func edited(err error, edit func(*policy.ConfigError)) error {
	if ce, ok := err.(*policy.ConfigError); ok {
		c := *ce
		edit(&c)
		return &c
	}
	return err
}

// segmentNamed returns the segment called name, ignoring case.
func segmentNamed(segs map[string]segment, name string) (string, bool) {
	for seg := range segs {
		if strings.EqualFold(seg, name) {
			return seg, true
		}
	}
	return "", false
}

// attributeNamed returns s's attribute called name, ignoring case.
func attributeNamed(s segment, name string) (string, bool) {
	for _, attr := range s.attributes {
		if strings.EqualFold(attr, name) {
			return attr, true
		}
	}
	return "", false
}

// attributeEnd returns the index of the last part of parts, before the last one, that is
// an attribute right after its segment (ignoring case); 0 when there is none.
func attributeEnd(segs map[string]segment, parts []string) int {
	for i := len(parts) - 2; i >= 1; i-- {
		if seg, ok := segmentNamed(segs, parts[i-1]); ok {
			if _, ok := attributeNamed(segs[seg], parts[i]); ok {
				return i
			}
		}
	}
	return 0
}

// builtInOnly refuses, with R4C-REG-011, an order for every composition that names a layer
// other than the built-in ones: no user layer is in every composition.
func builtInOnly(order string) error {
	layers, _ := parseOrder(order)
	known := defaultOrder()
	for _, l := range layers {
		if !slices.Contains(known, l) {
			name := fmt.Sprintf("%q", l)
			if len(l) > maxSuggestLen {
				name = fmt.Sprintf("a layer name of %d bytes", len(l))
			}
			return r4c.Errorf(r4c.BadOrder, "", order,
				"an order for every composition may name built-in layers only (%s), not %s", orderString(known), name)
		}
	}
	return nil
}
