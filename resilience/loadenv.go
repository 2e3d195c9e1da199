package resilience

import (
	"errors"
	"os"
	"strings"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// envPrefix is the prefix of the environment variables that FromEnv reads.
const envPrefix = "R4C_"

// FromEnv reads configuration keys from the environment variables named
// R4C_<SCOPE>_<POLICY>_<ATTRIBUTE> and R4C_<SCOPE>_<ID>_<POLICY>_<ATTRIBUTE>:
//   - SCOPE is DEFAULTS, CONFIGS or INSTANCES; POLICY and ATTRIBUTE are the key's segments
//     with the dots and case removed (RATELIMITER, MAXWAIT), matched without regard to case;
//   - ID is the configuration name or instance id exactly as written, case kept, with each
//     dot written as a double underscore: the id SearchAPI.Search is SearchAPI__Search. An
//     id with two underscores in a row or an underscore next to a dot, an '=' or a NUL
//     byte has no variable: set it with LoadProperties, LoadYAML or WithProperties.
//
// So R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS=20 is
// instances.SearchAPI.Search.rateLimiter.permits = 20, and R4C_DEFAULTS_RATELIMITER_MAXWAIT=1s
// is defaults.rateLimiter.maxWait = 1s. A variable with the prefix that does not fit returns
// a *policy.ConfigError with code R4C-CFG-001, saying what is wrong and naming the closest
// valid variable; one whose name after the prefix is longer than 1,024 bytes, or whose ID
// has three or more underscores in a row (which do not say where its dots are: ___ may
// be _. or ._), returns R4C-CFG-002; two variables that name one key
// (R4C_DEFAULTS_RATELIMITER_MAXWAIT and R4C_defaults_rateLimiter_maxWait) return
// R4C-CFG-003, naming both.
func FromEnv() (map[string]string, error) { return fromEnviron(os.Environ()) }

// fromEnviron is FromEnv over a list of "NAME=value" entries, as from os.Environ. The
// work is linear in the total size of the entries.
func fromEnviron(environ []string) (map[string]string, error) {
	props := map[string]string{}
	names := map[string]string{} // the variable of each key
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) {
			continue
		}
		key, err := envKey(strings.TrimPrefix(name, envPrefix))
		if err != nil {
			return nil, err
		}
		if first, dup := names[key]; dup {
			return nil, r4c.Errorf(r4c.DuplicateKey, key, "", "set twice in one source, by the variables %s and %s", first, name)
		}
		names[key] = name
		props[key] = value
	}
	return props, nil
}

// envKey maps SCOPE[_ID]_POLICY_ATTRIBUTE to its configuration key.
func envKey(name string) (string, error) { return parseEnv(name, true) }

// errNoVariable is parseEnv's error for a name that fits no key, when it is not asked to
// say why.
var errNoVariable = errors.New("not a configuration variable")

// parseEnv is envKey; with explain unset, a name that fits no key returns errNoVariable,
// so that the suggestions of unknownVariable can try names without building messages.
func parseEnv(name string, explain bool) (string, error) {
	unknown := func(what string) error {
		if !explain {
			return errNoVariable
		}
		return unknownVariable(name, what)
	}
	if len(name) > maxKeyLen {
		return "", r4c.Errorf(r4c.BadSource, envPrefix+name, "", "the variable name is longer than %d bytes after %s", maxKeyLen, envPrefix)
	}
	scopeEnd := strings.IndexByte(name, '_')
	attrStart := strings.LastIndexByte(name, '_')
	if scopeEnd < 0 || attrStart <= scopeEnd {
		return "", unknown("")
	}
	rest := name[:attrStart]
	segStart := strings.LastIndexByte(rest, '_')
	if segStart < scopeEnd {
		return "", unknown("")
	}
	scope := strings.ToLower(name[:scopeEnd])
	segName, attrName := rest[segStart+1:], name[attrStart+1:]
	var raw, id string // the id as written, and with its dots
	if segStart > scopeEnd {
		raw = name[scopeEnd+1 : segStart]
		id = strings.ReplaceAll(raw, "__", ".")
	}
	segs := segments()
	segment, ok := segmentNamed(segs, segName)
	if !ok {
		return "", unknown("")
	}
	attr, ok := attributeNamed(segs[segment], attrName)
	if !ok {
		return "", unknown("")
	}
	switch {
	case scope == scopeDefaults && id == "":
		return scopeDefaults + "." + segment + "." + attr, nil
	case (scope == scopeConfigs || scope == scopeInstances) && id != "":
		if n := longestRun(raw, '_'); n > 2 {
			what := "instance id"
			if scope == scopeConfigs {
				what = "configuration name"
			}
			return "", r4c.Errorf(r4c.BadSource, envPrefix+name, "",
				"the %s has %d underscores in a row, which do not say where its dots are: a dot is written as two underscores, so ___ may be _. or ._; set this key in a properties or YAML source", what, n)
		}
		return scope + "." + id + "." + segment + "." + attr, nil
	case scope == scopeDefaults:
		return "", unknown("DEFAULTS takes no name or id before the policy")
	case scope == scopeConfigs:
		return "", unknown("the configuration name is missing: R4C_CONFIGS_<NAME>_<POLICY>_<ATTRIBUTE>")
	case scope == scopeInstances:
		return "", unknown("the instance id is missing: R4C_INSTANCES_<ID>_<POLICY>_<ATTRIBUTE>")
	}
	return "", unknown("the scope must be DEFAULTS, CONFIGS or INSTANCES")
}

// envName returns the environment variable that FromEnv maps to a configuration key, e.g.
// "R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS" for
// "instances.SearchAPI.Search.rateLimiter.permits", checked to read back as key exactly
// with envKey. It returns "" for a key that is not a valid configuration key, and for one
// that no variable can express: a name or id with two underscores in a row or an
// underscore next to a dot (a dot is written as two underscores, so these would read back
// as another key, or be refused as ambiguous), an '=' or a NUL byte, or a variable name
// longer than maxKeyLen after the prefix. The suggestions of unknownVariable use it.
func envName(key string) string {
	scope, segment, attr, ok := parseKey(key)
	if !ok {
		return ""
	}
	head, id, _ := strings.Cut(scope, ".")
	name := strings.ToUpper(head)
	if id != "" {
		name += "_" + strings.ReplaceAll(id, ".", "__")
	}
	name += "_" + strings.ToUpper(segment) + "_" + strings.ToUpper(attr)
	if strings.ContainsAny(name, "=\x00") {
		return "" // "NAME=value" is cut at the first '='; no variable holds a NUL byte
	}
	if back, err := parseEnv(name, false); err != nil || back != key {
		return ""
	}
	return envPrefix + name
}
