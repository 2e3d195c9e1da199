package resilience

import (
	"maps"
	"slices"
	"strings"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/kind"
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
	out := lo.SliceToMap(kind.All(), func(k kind.Kind) (string, segment) {
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
	applied map[[2]string]bool                      // {scope, segment} applied to an instance; guarded by the registry's lock
}

// parseKey splits a configuration key into its scope ("defaults", "configs.<name>",
// "instances.<id>"), policy segment and attribute. Names and ids may contain dots, so the
// key is read from the right.
func parseKey(key string) (scope, segment, attr string, ok bool) {
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
	seg, known := segments()[segment]
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
// (naming the closest valid key), a value of the wrong syntax the attribute's code
// (R4C-ATR-001, -005, -006, -007). The error's Key is the whole configuration key. Keys are
// checked in sorted order, so the error reported is deterministic.
func newProperties(props map[string]string) (*properties, error) {
	p := &properties{byScope: map[string]map[string]map[string]string{}, applied: map[[2]string]bool{}}
	segs := segments()
	for _, key := range slices.Sorted(maps.Keys(props)) {
		value := props[key]
		scope, segment, attr, ok := parseKey(key)
		if !ok {
			return nil, &policy.ConfigError{Code: policy.CodeUnknownKey, Key: key,
				Reason: "unknown configuration key; did you mean " + closestKey(key) + "?"}
		}
		if err := segs[segment].check(attr, value); err != nil {
			return nil, withKey(err, key)
		}
		if scope == scopeDefaults && segment == compositionSegment {
			if err := builtInOnly(value); err != nil {
				return nil, withKey(err, key)
			}
		}
		if p.byScope[scope] == nil {
			p.byScope[scope] = map[string]map[string]string{}
		}
		if p.byScope[scope][segment] == nil {
			p.byScope[scope][segment] = map[string]string{}
		}
		p.byScope[scope][segment][attr] = value
	}
	return p, nil
}

// hasConfig reports whether any key names configs.<name>.
func (p *properties) hasConfig(name string) bool {
	_, ok := p.byScope[scopeConfigs+"."+name]
	return ok
}

// value returns the value of the key <scope>.<segment>.<attr>, and marks it used.
func (p *properties) value(scope, segment, attr string) (string, bool) {
	v, ok := p.byScope[scope][segment][attr]
	if ok {
		p.applied[[2]string{scope, segment}] = true
	}
	return v, ok
}

// apply sets every attribute of scope's segment with set, in attribute order.
func (p *properties) apply(scope, segment string, set func(attr, value string) error) error {
	p.applied[[2]string{scope, segment}] = true
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
			if p.applied[[2]string{scope, segment}] {
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

func withKey(err error, key string) error {
	if ce, ok := err.(*policy.ConfigError); ok {
		c := *ce
		c.Key = key
		return &c
	}
	return err
}

// closestKey returns the valid key nearest to key by edit distance: the same scope and
// instance (or config name) with each known segment and attribute, and the defaults.
func closestKey(key string) string {
	parts := strings.Split(key, ".")
	var middles []string // what stands between the scope and the segment
	if len(parts) > 3 {
		middles = append(middles, strings.Join(parts[1:len(parts)-2], "."))
	} else if len(parts) == 3 {
		middles = append(middles, parts[1])
	}
	var candidates []string
	for segment, s := range segments() {
		for _, attr := range s.attributes {
			tail := segment + "." + attr
			candidates = append(candidates, scopeDefaults+"."+tail)
			for _, m := range middles {
				if segment != compositionSegment { // no configs.<name> scope for the composition
					candidates = append(candidates, scopeConfigs+"."+m+"."+tail)
				}
				candidates = append(candidates, scopeInstances+"."+m+"."+tail)
			}
		}
	}
	slices.Sort(candidates)
	// Nearest by edit distance, ignoring case; a candidate whose attribute contains the
	// attribute as written (a truncated or miscased name) comes first.
	lower := strings.ToLower(key)
	written := lower[strings.LastIndexByte(lower, '.')+1:]
	best, bestScore := "", -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		score := editDistance(lower, lc)
		if written == "" || !strings.Contains(lc[strings.LastIndexByte(lc, '.')+1:], written) {
			score += 1 << 16
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// builtInOnly refuses, with R4C-REG-011, an order for every composition that names a layer
// other than the built-in ones: no user layer is in every composition.
func builtInOnly(order string) error {
	layers, _ := parseOrder(order)
	known := DefaultOrder()
	for _, l := range layers {
		if !slices.Contains(known, l) {
			return policy.Errorf(policy.CodeBadOrder, "", order,
				"an order for every composition may name built-in layers only (%s), not %q", orderString(known), l)
		}
	}
	return nil
}
