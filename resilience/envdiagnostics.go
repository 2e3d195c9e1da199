package resilience

import (
	"fmt"
	"strings"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// unknownVariable is the R4C-CFG-001 of a variable R4C_<name> that names no key: what is
// wrong, if known, the form of a variable, and the closest valid one when there is one
// other than the variable itself.
func unknownVariable(name, what string) error {
	var near string // the variable to suggest, after the prefix
	incomplete := false
	if what == "" {
		what, near = incompleteVariable(name)
		incomplete = what != ""
	}
	reason := "not a configuration variable"
	if what != "" {
		reason += ": " + what
	}
	reason += "; use R4C_<DEFAULTS|CONFIGS|INSTANCES>[_<ID>]_<POLICY>_<ATTRIBUTE>, e.g. R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS"
	switch {
	case len(name) > maxSuggestLen:
	case near != "":
		reason += "; did you mean " + envPrefix + near + "?"
	case incomplete: // what is missing or too much is said; no other variable is near
	default:
		if key := closestKey(roughKey(name)); key != "" {
			if v := envName(key); v != "" && !strings.EqualFold(v, envPrefix+name) {
				reason += "; did you mean " + v + "?"
			}
		}
	}
	return &policy.ConfigError{Code: r4c.UnknownKey, Key: envPrefix + name, Reason: reason}
}

// incompleteVariable is incomplete for a variable R4C_<name>: what is wrong with it when it
// names a policy but no attribute, names a scope and nothing more, or goes on after a
// valid variable, and the valid variable to suggest (after the prefix), if there is one.
// It returns "", "" otherwise.
func incompleteVariable(name string) (what, near string) {
	segs := segments()
	parts := strings.Split(name, "_")
	last := len(parts) - 1
	if seg, ok := segmentNamed(segs, parts[last]); ok {
		attrs := segs[seg].attributes
		upper := make([]string, len(attrs))
		for i, a := range attrs {
			upper[i] = strings.ToUpper(a)
		}
		what = fmt.Sprintf("it names the %s but no attribute; its attributes are %s", segmentWords(seg, strings.ToUpper(seg)), strings.Join(upper, ", "))
		if _, err := parseEnv(name+"_"+upper[0], false); err == nil {
			near = name + "_" + upper[0]
		}
		return what, near
	}
	if i := attributeEnd(segs, parts); i > 0 {
		prefix := strings.Join(parts[:i+1], "_")
		if _, err := parseEnv(prefix, false); err == nil {
			return fmt.Sprintf("it goes on after the attribute %s_%s", strings.ToUpper(parts[i-1]), strings.ToUpper(parts[i])), prefix
		}
	}
	switch {
	case len(parts) == 1 && (strings.EqualFold(name, scopeDefaults) || strings.EqualFold(name, scopeConfigs) || strings.EqualFold(name, scopeInstances)):
		return "it names the scope " + strings.ToUpper(name) + " but no policy or attribute", ""
	case len(parts) == 2 && strings.EqualFold(parts[0], scopeConfigs):
		return "it names a configuration but no policy or attribute", ""
	case len(parts) == 2 && strings.EqualFold(parts[0], scopeInstances):
		return "it names an instance but no policy or attribute", ""
	}
	return "", ""
}

// roughKey turns a variable name that envKey refused into a dotted key with the known
// segment and attribute names in their case, for the suggestion of the closest valid key.
func roughKey(name string) string {
	parts := strings.Split(strings.ReplaceAll(name, "__", "\x00"), "_")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, "\x00", ".")
	}
	parts[0] = strings.ToLower(parts[0])
	for segment, s := range segments() {
		for i := 1; i < len(parts); i++ {
			if strings.EqualFold(parts[i], segment) {
				parts[i] = segment
			}
			for _, attr := range s.attributes {
				if strings.EqualFold(parts[i], attr) {
					parts[i] = attr
				}
			}
		}
	}
	return strings.Join(parts, ".")
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := range len(s) {
		if s[i] != c {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}
