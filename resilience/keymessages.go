package resilience

import (
	"fmt"
	"slices"
	"strings"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/suggest"
	"github.com/resilience4go/resilience4go/policy"
)

// maxSuggestLen is the length, in bytes, of the longest unknown key for which a closest
// valid key is looked for: a longer one is not a typo of a valid key, and the edit
// distance costs its length times a candidate's.
const maxSuggestLen = 256

// maxEditDistance is the largest edit distance at which a valid key is suggested; the
// distance is computed only up to it.
const maxEditDistance = 32

// unknownKey is the R4C-CFG-001 of key, which parseKey refuses: what is wrong with it when
// its form is wrong or it stops short of an attribute or goes on after one, else the
// closest valid key, if one is near and key is not too long.
func unknownKey(segs map[string]segment, key string) error {
	reason := "unknown configuration key"
	if what := malformed(segs, key); what != "" {
		reason += ": " + what
	} else if what := incomplete(segs, key); what != "" {
		reason += ": " + what
	} else if near := closestKey(key); near != "" {
		reason += "; did you mean " + near + "?"
	} else {
		reason += "; " + keyForms
	}
	return &policy.ConfigError{Code: r4c.UnknownKey, Key: key, Reason: reason}
}

// malformed says what is wrong with the form of a key that parseKey refuses when that is
// more than a misspelling: spaces around it, an empty part (an empty name or id), or a
// scope the key's policy segment does not have. It returns "" otherwise.
func malformed(segs map[string]segment, key string) string {
	if strings.TrimSpace(key) != key {
		return "the key has spaces around it"
	}
	parts := strings.Split(key, ".")
	if !slices.Contains(parts, "") {
		if len(parts) > 3 && parts[0] == scopeConfigs && parts[len(parts)-2] == compositionSegment {
			return "the composition's order has no configs.<name> scope: use defaults." + orderKey + " or instances.<id>." + orderKey
		}
		return ""
	}
	if len(parts) > 3 && parts[len(parts)-1] != "" && isSegment(segs, parts[len(parts)-2]) {
		id := parts[1 : len(parts)-2]
		switch {
		case parts[0] == scopeConfigs && len(id) == 1:
			return "the configuration name is empty: configs.<name>.<policy>.<attribute>"
		case parts[0] == scopeConfigs && slices.Contains(id, ""):
			return "the configuration name has an empty part (two dots in a row, or a dot at its start or end)"
		case parts[0] == scopeInstances && len(id) == 1:
			return "the instance id is empty: instances.<id>.<policy>.<attribute>"
		case parts[0] == scopeInstances && slices.Contains(id, ""):
			return "the instance id has an empty part (two dots in a row, or a dot at its start or end)"
		}
	}
	return "the key has an empty part: a dot at its start or end, or two dots in a row"
}

// keyForms is how a configuration key is made, for messages.
const keyForms = "keys are defaults.<policy>.<attribute>, configs.<name>.<policy>.<attribute> or instances.<id>.<policy>.<attribute>"

// incomplete says what is wrong with a key that parseKey refuses when it names a policy
// segment but no attribute (instances.A.rateLimiter), names a scope and nothing more
// (defaults, instances.A), or goes on after a valid key (instances.A.rateLimiter.permits.x).
// Segments and attributes are matched ignoring case. A key or example is quoted only up to
// maxSuggestLen bytes. It returns "" otherwise.
func incomplete(segs map[string]segment, key string) string {
	parts := strings.Split(key, ".")
	last := len(parts) - 1
	if seg, ok := segmentNamed(segs, parts[last]); ok {
		attrs := segs[seg].attributes
		what := fmt.Sprintf("it names the %s but no attribute; its attributes are %s", segmentWords(seg, seg), strings.Join(attrs, ", "))
		example := strings.Join(append(parts[:last:last], seg, attrs[0]), ".")
		if _, _, _, valid := parseKeyIn(segs, example); valid && len(example) <= maxSuggestLen {
			return what + ", e.g. " + example
		}
		return what + "; " + keyForms
	}
	if i := attributeEnd(segs, parts); i > 0 {
		seg, _ := segmentNamed(segs, parts[i-1])
		attr, _ := attributeNamed(segs[seg], parts[i])
		what := fmt.Sprintf("it goes on after the attribute %s.%s", seg, attr)
		prefix := strings.Join(append(parts[:i-1:i-1], seg, attr), ".")
		if _, _, _, valid := parseKeyIn(segs, prefix); valid {
			if len(prefix) <= maxSuggestLen {
				return what + "; did you mean " + prefix + "?"
			}
			return what + ": remove what follows it"
		}
	}
	switch {
	case len(parts) == 1 && (key == scopeDefaults || key == scopeConfigs || key == scopeInstances):
		return "it names the scope " + key + " but no policy or attribute; " + keyForms
	case len(parts) == 2 && parts[0] == scopeConfigs:
		return "it names a configuration but no policy or attribute: configs.<name>.<policy>.<attribute>"
	case len(parts) == 2 && parts[0] == scopeInstances:
		return "it names an instance but no policy or attribute: instances.<id>.<policy>.<attribute>"
	}
	return ""
}

// segmentWords names segment seg, written as shown, in a message: "policy rateLimiter",
// "composition segment".
func segmentWords(seg, shown string) string {
	if seg == compositionSegment {
		return shown + " segment"
	}
	return "policy " + shown
}

// isSegment reports whether name is a policy segment of configuration keys.
func isSegment(segs map[string]segment, name string) bool {
	_, ok := segs[name]
	return ok
}

// closestKey returns the valid key nearest to key by edit distance: the same scope and
// instance (or config name) with each known segment and attribute, and the defaults. It
// returns "" for a key longer than maxSuggestLen or when no valid key is within
// maxEditDistance. The key returned is never key itself.
func closestKey(key string) string {
	if len(key) > maxSuggestLen {
		return ""
	}
	parts := strings.Split(key, ".")
	var middles []string // what may stand between the scope and the segment
	if len(parts) > 3 {
		middles = append(middles, strings.Join(parts[1:len(parts)-2], "."))
	} else if len(parts) == 3 {
		middles = append(middles, parts[1])
	}
	if len(parts) > 4 { // a part too many at the end
		middles = append(middles, strings.Join(parts[1:len(parts)-3], "."))
	}
	segs := segments()
	var candidates []string
	for segment, s := range segs {
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
		if _, _, _, ok := parseKeyIn(segs, c); !ok || c == key {
			continue // e.g. an empty id: never suggest a key that is not valid
		}
		lc := strings.ToLower(c)
		score := suggest.Distance(lower, lc, maxEditDistance)
		if score > maxEditDistance {
			continue
		}
		if written == "" || !strings.Contains(lc[strings.LastIndexByte(lc, '.')+1:], written) {
			score += 1 << 16
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// maxShownID is the length, in bytes, of the longest instance id or configuration name
// that a message repeats whole.
const maxShownID = 100

// shownID is id as a message repeats it: whole up to maxShownID bytes, else its start,
// cut between characters, an ellipsis and its length.
func shownID(id string) string {
	if len(id) <= maxShownID {
		return id
	}
	return fmt.Sprintf("%s… (%d bytes)", contract.Clip(id, maxShownID), len(id))
}
