package resilience

import (
	"bufio"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/resilience4go/resilience4go/policy"
)

// MaxKeyLen is the length, in bytes, of the longest key LoadProperties and LoadYAML read
// and of the longest variable name after the prefix that FromEnv reads: no configuration
// key needs more, and the bound keeps the work of a malformed source in proportion to its
// size.
const MaxKeyLen = 1024

// LoadProperties reads configuration keys in the properties format: one
// key=value (or key: value) per line; blank lines and lines starting with # or ! are
// comments (a comment never continues); spaces around keys and values are trimmed; a line
// ending in an odd number of backslashes continues on the next (the last backslash is
// dropped; other backslashes are kept as written: no escape sequences are decoded); a
// UTF-8 byte-order mark at the start is ignored. It returns the flat map for
// WithProperties. A line with no key, a key longer than MaxKeyLen or a physical line
// longer than 1 MiB returns a *policy.ConfigError with code R4C-CFG-002 and the line
// number; a key given on two lines returns R4C-CFG-003, naming both lines. Keys are not
// checked here: NewRegistry does that. The work is linear in the size of r.
func LoadProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	lines := map[string]int{} // the line of each key
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var joined strings.Builder
	lineNo := 0
	for sc.Scan() {
		lineNo++
		first := lineNo
		text := sc.Text()
		if lineNo == 1 {
			text = strings.TrimPrefix(text, byteOrderMark)
		}
		line := strings.TrimSpace(text)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue // a comment line never continues on the next
		}
		if continues(line) {
			// Each physical line is looked at once: the joined line grows in a builder, and
			// whether a line continues depends on its own trailing backslashes only (the
			// run before it is even once its last backslash is dropped).
			joined.Reset()
			for continues(line) {
				joined.WriteString(line[:len(line)-1])
				line = ""
				if !sc.Scan() {
					break
				}
				lineNo++
				line = strings.TrimSpace(sc.Text())
			}
			joined.WriteString(line)
			line = joined.String()
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return nil, policy.Errorf(policy.CodeBadSource, "", line, "line %d: expected key=value", first)
		}
		key := strings.TrimSpace(line[:i])
		switch {
		case key == "":
			return nil, policy.Errorf(policy.CodeBadSource, "", line, "line %d: the key is empty", first)
		case len(key) > MaxKeyLen:
			return nil, policy.Errorf(policy.CodeBadSource, key, "", "line %d: the key is longer than %d bytes", first, MaxKeyLen)
		}
		if at, dup := lines[key]; dup {
			return nil, policy.Errorf(policy.CodeDuplicateKey, key, "", "set twice in one source, on lines %d and %d", at, first)
		}
		lines[key] = first
		props[key] = strings.TrimSpace(line[i+1:])
	}
	if err := sc.Err(); err != nil {
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "line %d: reading properties: %v", lineNo+1, err)
	}
	return props, nil
}

// byteOrderMark is the UTF-8 byte-order mark that some editors put at the start of a file.
const byteOrderMark = "\uFEFF"

// continues reports whether a line ends in an odd number of backslashes: the last one
// joins the next line; an even number is escaped backslashes.
func continues(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// LoadYAML reads configuration keys from a YAML document of nested mappings,
// flattened with dots: `instances: {SearchAPI.Search: {rateLimiter: {permits: 20}}}`
// gives instances.SearchAPI.Search.rateLimiter.permits = "20". Scalars keep their text as
// written ("500ms", "true", "10"). A UTF-8 byte-order mark at the start is ignored. A
// sequence, a null value, an anchor, alias or merge key (`&a`, `*a`, `<<`: use
// configs.<name> to share settings), a flattened key longer than MaxKeyLen, or a document
// that is not a mapping returns a *policy.ConfigError with code R4C-CFG-002. A key given
// twice, whether in the same spelling or in two (`rateLimiter.permits: 1` next to
// `rateLimiter: {permits: 2}`), returns R4C-CFG-003, naming the lines of both. An empty
// document is an empty map.
func LoadYAML(r io.Reader) (map[string]string, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(r).Decode(&root); err != nil {
		if err == io.EOF {
			return map[string]string{}, nil
		}
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "YAML: %v", err)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "YAML line %d: the document must be a mapping of keys", doc.Line)
	}
	f := flattener{props: map[string]string{}, lines: map[string]int{}}
	if err := f.walk(doc); err != nil {
		return nil, err
	}
	return f.props, nil
}

// flattener flattens a YAML mapping into keys. The key of the node being walked grows
// and shrinks in one buffer, so that the work is proportional to the keys produced, and
// each key is at most MaxKeyLen bytes.
type flattener struct {
	props map[string]string
	lines map[string]int // the line of each key's value
	path  []byte         // the key of the node being walked
}

func (f *flattener) walk(n *yaml.Node) error {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return policy.Errorf(policy.CodeBadSource, string(f.path), "", "YAML line %d: anchors and aliases are not supported; share settings with configs.<name>", n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				return policy.Errorf(policy.CodeBadSource, string(f.path), "", "YAML line %d: merge keys (<<) are not supported; share settings with configs.<name>", k.Line)
			}
			if k.Kind != yaml.ScalarNode || k.Value == "" || k.Anchor != "" {
				return policy.Errorf(policy.CodeBadSource, string(f.path), "", "YAML line %d: keys must be non-empty scalars", k.Line)
			}
			mark := len(f.path)
			if mark > 0 {
				f.path = append(f.path, '.')
			}
			if len(f.path)+len(k.Value) > MaxKeyLen {
				key := string(append(f.path, k.Value...))
				f.path = f.path[:mark]
				return policy.Errorf(policy.CodeBadSource, key, "", "YAML line %d: the key is longer than %d bytes", k.Line, MaxKeyLen)
			}
			f.path = append(f.path, k.Value...)
			err := f.walk(v)
			f.path = f.path[:mark]
			if err != nil {
				return err
			}
		}
		return nil
	case yaml.ScalarNode:
		key := string(f.path)
		if n.Tag == "!!null" {
			return policy.Errorf(policy.CodeBadSource, key, "", "YAML line %d: the value is empty", n.Line)
		}
		if at, dup := f.lines[key]; dup {
			return policy.Errorf(policy.CodeDuplicateKey, key, "", "set twice in one source, by the values on YAML lines %d and %d", at, n.Line)
		}
		f.lines[key] = n.Line
		f.props[key] = n.Value
		return nil
	}
	return policy.Errorf(policy.CodeBadSource, string(f.path), "", "YAML line %d: expected a mapping or a scalar value", n.Line)
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
// a *policy.ConfigError with code R4C-CFG-001, saying what is wrong and naming the closest
// valid variable; one whose name after the prefix is longer than MaxKeyLen returns
// R4C-CFG-002; two variables that name one key (R4C_DEFAULTS_RATELIMITER_MAXWAIT and
// R4C_defaults_rateLimiter_maxWait) return R4C-CFG-003, naming both.
func FromEnv() (map[string]string, error) { return FromEnviron(os.Environ()) }

// FromEnviron is FromEnv over a list of "NAME=value" entries, as from os.Environ. The
// work is linear in the total size of the entries.
func FromEnviron(environ []string) (map[string]string, error) {
	props := map[string]string{}
	names := map[string]string{} // the variable of each key
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key, err := envKey(strings.TrimPrefix(name, EnvPrefix))
		if err != nil {
			return nil, err
		}
		if first, dup := names[key]; dup {
			return nil, policy.Errorf(policy.CodeDuplicateKey, key, "", "set twice in one source, by the variables %s and %s", first, name)
		}
		names[key] = name
		props[key] = value
	}
	return props, nil
}

// envKey maps SCOPE[_ID]_POLICY_ATTRIBUTE to its configuration key.
func envKey(name string) (string, error) {
	if len(name) > MaxKeyLen {
		return "", policy.Errorf(policy.CodeBadSource, EnvPrefix+name, "", "the variable name is longer than %d bytes after %s", MaxKeyLen, EnvPrefix)
	}
	scopeEnd := strings.IndexByte(name, '_')
	attrStart := strings.LastIndexByte(name, '_')
	if scopeEnd < 0 || attrStart <= scopeEnd {
		return "", unknownVariable(name, "")
	}
	rest := name[:attrStart]
	segStart := strings.LastIndexByte(rest, '_')
	if segStart < scopeEnd {
		return "", unknownVariable(name, "")
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
			case scope == scopeDefaults:
				return "", unknownVariable(name, "DEFAULTS takes no name or id before the policy")
			case scope == scopeConfigs:
				return "", unknownVariable(name, "the configuration name is missing: R4C_CONFIGS_<NAME>_<POLICY>_<ATTRIBUTE>")
			case scope == scopeInstances:
				return "", unknownVariable(name, "the instance id is missing: R4C_INSTANCES_<ID>_<POLICY>_<ATTRIBUTE>")
			}
			return "", unknownVariable(name, "the scope must be DEFAULTS, CONFIGS or INSTANCES")
		}
	}
	return "", unknownVariable(name, "")
}

// unknownVariable is the R4C-CFG-001 of a variable R4C_<name> that names no key: what is
// wrong, if known, the form of a variable, and the closest valid one when there is one
// other than the variable itself.
func unknownVariable(name, what string) error {
	reason := "not a configuration variable"
	if what != "" {
		reason += ": " + what
	}
	reason += "; use R4C_<DEFAULTS|CONFIGS|INSTANCES>[_<ID>]_<POLICY>_<ATTRIBUTE>, e.g. R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS"
	if len(name) <= maxSuggestLen {
		if key := closestKey(roughKey(name)); key != "" {
			if v := envName(key); !strings.EqualFold(v, EnvPrefix+name) {
				reason += "; did you mean " + v + "?"
			}
		}
	}
	return &policy.ConfigError{Code: policy.CodeUnknownKey, Key: EnvPrefix + name, Reason: reason}
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
