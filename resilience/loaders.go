package resilience

import (
	"bufio"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/resilience4go/resilience4go/policy"
)

// LoadProperties reads configuration keys in the properties format: one
// key=value (or key: value) per line; blank lines and lines starting with # or ! are
// comments (a comment never continues); spaces around keys and values are trimmed; a line
// ending in an odd number of backslashes continues on the next (the last backslash is
// dropped; other backslashes are kept as written: no escape sequences are decoded). It returns the flat map for WithProperties. A line with no key
// returns a *policy.ConfigError with code R4C-CFG-002 and the line number. Keys are not
// checked here: NewRegistry does that.
func LoadProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		first := lineNo
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue // a comment line never continues on the next
		}
		for continues(line) {
			line = line[:len(line)-1]
			if !sc.Scan() {
				break
			}
			lineNo++
			line += strings.TrimSpace(sc.Text())
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return nil, policy.Errorf(policy.CodeBadSource, "", line, "line %d: expected key=value", first)
		}
		key := strings.TrimSpace(line[:i])
		if key == "" {
			return nil, policy.Errorf(policy.CodeBadSource, "", line, "line %d: the key is empty", first)
		}
		props[key] = strings.TrimSpace(line[i+1:])
	}
	if err := sc.Err(); err != nil {
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "reading properties: %v", err)
	}
	return props, nil
}

// continues reports whether a line ends in an odd number of backslashes: the last one
// joins the next line; an even number is escaped backslashes.
func continues(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// LoadYAML reads configuration keys from a YAML document of nested mappings,
// flattened with dots: `instances: {SearchAPI.Search: {rateLimiter: {permits: 20}}}`
// gives instances.SearchAPI.Search.rateLimiter.permits = "20". Scalars keep their text as
// written ("500ms", "true", "10"). A sequence, a null value, an anchor, alias or merge
// key (`&a`, `*a`, `<<`: use configs.<name> to share settings), or a document that is
// not a mapping returns a *policy.ConfigError with code R4C-CFG-002. An empty document is
// an empty map.
func LoadYAML(r io.Reader) (map[string]string, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(r).Decode(&root); err != nil {
		if err == io.EOF {
			return map[string]string{}, nil
		}
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "YAML: %v", err)
	}
	props := map[string]string{}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "YAML line %d: the document must be a mapping of keys", doc.Line)
	}
	if err := flatten(doc, "", props); err != nil {
		return nil, err
	}
	return props, nil
}

func flatten(n *yaml.Node, prefix string, props map[string]string) error {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return policy.Errorf(policy.CodeBadSource, prefix, "", "YAML line %d: anchors and aliases are not supported; share settings with configs.<name>", n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				return policy.Errorf(policy.CodeBadSource, prefix, "", "YAML line %d: merge keys (<<) are not supported; share settings with configs.<name>", k.Line)
			}
			if k.Kind != yaml.ScalarNode || k.Value == "" || k.Anchor != "" {
				return policy.Errorf(policy.CodeBadSource, prefix, "", "YAML line %d: keys must be non-empty scalars", k.Line)
			}
			key := k.Value
			if prefix != "" {
				key = prefix + "." + key
			}
			if err := flatten(v, key, props); err != nil {
				return err
			}
		}
		return nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return policy.Errorf(policy.CodeBadSource, prefix, "", "YAML line %d: the value is empty", n.Line)
		}
		props[prefix] = n.Value
		return nil
	}
	return policy.Errorf(policy.CodeBadSource, prefix, "", "YAML line %d: expected a mapping or a scalar value", n.Line)
}

// EnvPrefix is the prefix of the environment variables that FromEnv reads.
const EnvPrefix = "R4C_"

// FromEnv reads configuration keys from the environment variables named
// R4C_<SCOPE>_<POLICY>_<ATTRIBUTE> and R4C_<SCOPE>_<ID>_<POLICY>_<ATTRIBUTE>:
//   - SCOPE is DEFAULTS, CONFIGS or INSTANCES; POLICY and ATTRIBUTE are the key's segments
//     with the dots and case removed (RATELIMITER, MAXWAIT), matched without regard to case;
//   - ID is the configuration name or instance id exactly as written, case kept, with each
//     dot written as a double underscore: the id SearchAPI.Search is SearchAPI__Search.
//
// So R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS=20 is
// instances.SearchAPI.Search.rateLimiter.permits = 20, and R4C_DEFAULTS_RATELIMITER_MAXWAIT=1s
// is defaults.rateLimiter.maxWait = 1s. A variable with the prefix that does not fit returns
// a *policy.ConfigError with code R4C-CFG-001, naming the closest valid key.
func FromEnv() (map[string]string, error) { return FromEnviron(os.Environ()) }

// FromEnviron is FromEnv over a list of "NAME=value" entries, as from os.Environ.
func FromEnviron(environ []string) (map[string]string, error) {
	props := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key, err := envKey(strings.TrimPrefix(name, EnvPrefix))
		if err != nil {
			return nil, err
		}
		props[key] = value
	}
	return props, nil
}

// envKey maps SCOPE[_ID]_POLICY_ATTRIBUTE to its configuration key.
func envKey(name string) (string, error) {
	fail := func() error {
		return &policy.ConfigError{Code: policy.CodeUnknownKey, Key: EnvPrefix + name,
			Reason: "not a configuration variable: use R4C_<DEFAULTS|CONFIGS|INSTANCES>[_<ID>]_<POLICY>_<ATTRIBUTE>, e.g. " +
				"R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS; did you mean " + envName(closestKey(roughKey(name))) + "?"}
	}
	scopeEnd := strings.IndexByte(name, '_')
	attrStart := strings.LastIndexByte(name, '_')
	if scopeEnd < 0 || attrStart <= scopeEnd {
		return "", fail()
	}
	rest := name[:attrStart]
	segStart := strings.LastIndexByte(rest, '_')
	if segStart < scopeEnd {
		return "", fail()
	}
	scope := strings.ToLower(name[:scopeEnd])
	segName, attrName := rest[segStart+1:], name[attrStart+1:]
	var id string
	if segStart > scopeEnd {
		id = strings.ReplaceAll(name[scopeEnd+1:segStart], "__", ".")
	}
	for segment, s := range segments() {
		if !strings.EqualFold(segment, segName) {
			continue
		}
		for _, attr := range s.attributes {
			if !strings.EqualFold(attr, attrName) {
				continue
			}
			switch {
			case scope == scopeDefaults && id == "":
				return scopeDefaults + "." + segment + "." + attr, nil
			case (scope == scopeConfigs || scope == scopeInstances) && id != "":
				return scope + "." + id + "." + segment + "." + attr, nil
			}
		}
	}
	return "", fail()
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

// envName is the environment variable of a configuration key (the inverse of envKey).
func envName(key string) string {
	scope, segment, attr, ok := parseKey(key)
	if !ok {
		return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
	}
	head, id, _ := strings.Cut(scope, ".")
	name := EnvPrefix + strings.ToUpper(head)
	if id != "" {
		name += "_" + strings.ReplaceAll(id, ".", "__")
	}
	return name + "_" + strings.ToUpper(segment) + "_" + strings.ToUpper(attr)
}

// EnvName returns the environment variable that FromEnv maps to a configuration key, e.g.
// "R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS" for
// "instances.SearchAPI.Search.rateLimiter.permits".
func EnvName(key string) string { return envName(key) }
