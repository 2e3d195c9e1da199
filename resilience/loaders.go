package resilience

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
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

// LoadProperties reads configuration keys in the properties format: one key=value (or
// key: value) per line, a line ending in "\n", "\r\n" or "\r" alone (in any mix); blank
// lines and lines starting with # or ! are comments (a comment never continues); spaces
// around keys and values are trimmed; a line ending in an odd number of backslashes
// continues on the next (the last backslash is dropped; other backslashes are kept as
// written: no escape sequences are decoded); a UTF-8 byte-order mark at the start is
// ignored. It returns the flat map for WithProperties. A line with no key, a key longer
// than MaxKeyLen or a physical line longer than 1 MiB returns a *policy.ConfigError with
// code R4C-CFG-002 and the line number; a key given on two lines returns R4C-CFG-003,
// naming both lines. Keys are not checked here: NewRegistry does that. The work is
// linear in the size of r.
func LoadProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	lines := map[string]int{} // the line of each key
	sc := bufio.NewScanner(r)
	// Room for a longest line and its terminator ("\r\n"); a longer line is refused by
	// next, and one longer than the buffer by the scanner.
	sc.Buffer(make([]byte, 0, 64*1024), maxPropertiesLine+2)
	sc.Split((&lineScanner{}).split)
	lineNo := 0
	var bad error // why next returned false, when it was not the end of r
	// next reads the next physical line; false at the end of r or on a line it refuses.
	next := func() (string, bool) {
		if !sc.Scan() {
			if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
				bad = policy.Errorf(policy.CodeBadSource, "", "", "line %d is longer than 1 MiB", lineNo+1)
			} else if err != nil {
				bad = policy.Errorf(policy.CodeBadSource, "", "", "line %d: reading properties: %v", lineNo+1, err)
			}
			return "", false
		}
		lineNo++
		if len(sc.Bytes()) > maxPropertiesLine {
			bad = policy.Errorf(policy.CodeBadSource, "", "", "line %d is longer than 1 MiB", lineNo)
			return "", false
		}
		return sc.Text(), true
	}
	var joined strings.Builder
	for {
		text, ok := next()
		if !ok {
			break
		}
		first := lineNo
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
				text, ok := next()
				if !ok && bad != nil {
					return nil, bad
				}
				line = strings.TrimSpace(text)
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
	if bad != nil {
		return nil, bad
	}
	return props, nil
}

// maxPropertiesLine is the longest physical line LoadProperties reads, in bytes, without
// its terminator: 1 MiB.
const maxPropertiesLine = 1 << 20

// lineScanner is bufio.ScanLines with the line terminators of the properties format:
// "\n", "\r\n" and "\r" alone. A "\r" at the end of the data read so far waits for the
// next byte, which may be its "\n". It remembers how much of the line it has searched
// for a terminator, so that a reader that returns a long line a few bytes at a time
// costs time linear in its length, not quadratic.
type lineScanner struct{ searched int }

// split is the bufio.SplitFunc.
func (s *lineScanner) split(data []byte, atEOF bool) (advance int, line []byte, err error) {
	advance, line, err = scanLines(data, atEOF, s.searched)
	if advance > 0 {
		s.searched = 0 // the next token starts at the scanner's data
	} else {
		s.searched = len(data)
	}
	return advance, line, err
}

// scanLines splits data as lineScanner does, knowing that data[:from] holds no
// terminator (but for a "\r" last, which waits for the byte after it).
func scanLines(data []byte, atEOF bool, from int) (advance int, line []byte, err error) {
	from = max(min(from, len(data))-1, 0) // the "\r" that ended the data may be one
	i := bytes.IndexAny(data[from:], "\r\n")
	if i >= 0 {
		i += from
	}
	switch {
	case i < 0 && atEOF && len(data) > 0:
		return len(data), data, nil // a last line with no terminator
	case i < 0:
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data) && data[i+1] == '\n':
		return i + 2, data[:i], nil
	case i+1 < len(data) || atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a "\r" last: is a "\n" next?
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
// `rateLimiter: {permits: 2}`), and a mapping key repeated in one mapping at any level
// (`defaults:` twice at the top, or `rateLimiter:` twice under one scope), return
// R4C-CFG-003, naming the lines of both. An empty document (nothing, comments only, or a
// null such as a lone `---` or `~`) is an empty map. The configuration is one document:
// anything after it that is not empty (a second document after a `---` line, or text
// after a flow mapping's closing brace) returns R4C-CFG-002 rather than being ignored;
// empty documents after the first, such as a trailing `---`, are allowed.
func LoadYAML(r io.Reader) (map[string]string, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(r)
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return map[string]string{}, nil
		}
		return nil, policy.Errorf(policy.CodeBadSource, "", "", "YAML: %v", err)
	}
	props := map[string]string{}
	if !emptyDocument(&root) {
		doc := &root
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
			doc = doc.Content[0]
		}
		if doc.Kind != yaml.MappingNode {
			return nil, policy.Errorf(policy.CodeBadSource, "", "", "YAML line %d: the document must be a mapping of keys", doc.Line)
		}
		f := flattener{props: props, lines: map[string]int{}}
		if err := f.walk(doc); err != nil {
			return nil, err
		}
	}
	if err := onlyEmptyDocuments(dec); err != nil {
		return nil, err
	}
	return props, nil
}

// emptyDocument reports whether doc holds nothing: a null, however spelled (an empty
// value, `~`, `null`).
func emptyDocument(doc *yaml.Node) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return false
	}
	c := doc.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null"
}

// onlyEmptyDocuments reads what follows the first document and returns an R4C-CFG-002
// for the first document that holds anything, or for text that is not a document.
func onlyEmptyDocuments(dec *yaml.Decoder) error {
	for {
		var next yaml.Node
		switch err := dec.Decode(&next); {
		case err == io.EOF:
			return nil
		case err != nil:
			return policy.Errorf(policy.CodeBadSource, "", "", "YAML after the first document: %v; give the whole configuration in one document", err)
		}
		if !emptyDocument(&next) {
			return policy.Errorf(policy.CodeBadSource, "", "", "YAML line %d: a second document; give the whole configuration in one", next.Line)
		}
	}
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
		var seen map[string]int // the line of each key of this mapping
		if len(n.Content) > 2 {
			seen = make(map[string]int, len(n.Content)/2)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				return policy.Errorf(policy.CodeBadSource, string(f.path), "", "YAML line %d: merge keys (<<) are not supported; share settings with configs.<name>", k.Line)
			}
			if k.Kind != yaml.ScalarNode || k.Value == "" || k.Anchor != "" {
				return policy.Errorf(policy.CodeBadSource, string(f.path), "", "YAML line %d: keys must be non-empty scalars", k.Line)
			}
			if at, dup := seen[k.Value]; dup {
				key := k.Value
				if len(f.path) > 0 {
					key = string(f.path) + "." + k.Value
				}
				return policy.Errorf(policy.CodeDuplicateKey, key, "", "given twice in one mapping, on YAML lines %d and %d: give it once, with all that is under it", at, k.Line)
			} else if seen != nil {
				seen[k.Value] = k.Line
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
//     dot written as a double underscore: the id SearchAPI.Search is SearchAPI__Search. An
//     id with two underscores in a row or an underscore next to a dot has no variable
//     (EnvName returns ""): set it in another source.
//
// So R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS=20 is
// instances.SearchAPI.Search.rateLimiter.permits = 20, and R4C_DEFAULTS_RATELIMITER_MAXWAIT=1s
// is defaults.rateLimiter.maxWait = 1s. A variable with the prefix that does not fit returns
// a *policy.ConfigError with code R4C-CFG-001, saying what is wrong and naming the closest
// valid variable; one whose name after the prefix is longer than MaxKeyLen, or whose ID
// has three or more underscores in a row (which do not say where its dots are: ___ may
// be _. or ._), returns R4C-CFG-002; two variables that name one key
// (R4C_DEFAULTS_RATELIMITER_MAXWAIT and R4C_defaults_rateLimiter_maxWait) return
// R4C-CFG-003, naming both.
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
	if len(name) > MaxKeyLen {
		return "", policy.Errorf(policy.CodeBadSource, EnvPrefix+name, "", "the variable name is longer than %d bytes after %s", MaxKeyLen, EnvPrefix)
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
			return "", policy.Errorf(policy.CodeBadSource, EnvPrefix+name, "",
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
		reason += "; did you mean " + EnvPrefix + near + "?"
	case incomplete: // what is missing or too much is said; no other variable is near
	default:
		if key := closestKey(roughKey(name)); key != "" {
			if v := envName(key); v != "" && !strings.EqualFold(v, EnvPrefix+name) {
				reason += "; did you mean " + v + "?"
			}
		}
	}
	return &policy.ConfigError{Code: policy.CodeUnknownKey, Key: EnvPrefix + name, Reason: reason}
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

// EnvName returns the environment variable that FromEnv maps to a configuration key, e.g.
// "R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS" for
// "instances.SearchAPI.Search.rateLimiter.permits". Whenever it returns a name, FromEnv
// reads that variable back as key exactly. It returns "" for a key that is not a valid
// configuration key, and for one that no variable can express: a name or id with two
// underscores in a row or an underscore next to a dot (a dot is written as two
// underscores, so these would read back as another key, or be refused as ambiguous), an
// '=' or a NUL byte, or a variable name longer than MaxKeyLen after the prefix. Such a key
// can still be set with LoadProperties, LoadYAML or WithProperties. EnvName is safe for
// concurrent use.
func EnvName(key string) string { return envName(key) }

// envName is EnvName: the variable of key, checked to read back as key with envKey.
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
	return EnvPrefix + name
}
