package resilience

import (
	"io"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"go.yaml.in/yaml/v3"
)

// LoadYAML reads configuration keys from a YAML document of nested mappings,
// flattened with dots: `instances: {SearchAPI.Search: {rateLimiter: {permits: 20}}}`
// gives instances.SearchAPI.Search.rateLimiter.permits = "20". Scalars keep their text as
// written ("500ms", "true", "10"). A UTF-8 byte-order mark at the start is ignored. A
// sequence, a null value, an anchor, alias or merge key (`&a`, `*a`, `<<`: use
// configs.<name> to share settings), a flattened key longer than 1,024 bytes, or a document
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
		return nil, r4c.Errorf(r4c.BadSource, "", "", "YAML: %v", err)
	}
	props := map[string]string{}
	if !emptyDocument(&root) {
		doc := &root
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
			doc = doc.Content[0]
		}
		if doc.Kind != yaml.MappingNode {
			return nil, r4c.Errorf(r4c.BadSource, "", "", "YAML line %d: the document must be a mapping of keys", doc.Line)
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
			return r4c.Errorf(r4c.BadSource, "", "", "YAML after the first document: %v; give the whole configuration in one document", err)
		}
		if !emptyDocument(&next) {
			return r4c.Errorf(r4c.BadSource, "", "", "YAML line %d: a second document; give the whole configuration in one", next.Line)
		}
	}
}

// flattener flattens a YAML mapping into keys. The key of the node being walked grows
// and shrinks in one buffer, so that the work is proportional to the keys produced, and
// each key is at most maxKeyLen bytes.
type flattener struct {
	props map[string]string
	lines map[string]int // the line of each key's value
	path  []byte         // the key of the node being walked
}

func (f *flattener) walk(n *yaml.Node) error {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return r4c.Errorf(r4c.BadSource, string(f.path), "", "YAML line %d: anchors and aliases are not supported; share settings with configs.<name>", n.Line)
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
				return r4c.Errorf(r4c.BadSource, string(f.path), "", "YAML line %d: merge keys (<<) are not supported; share settings with configs.<name>", k.Line)
			}
			if k.Kind != yaml.ScalarNode || k.Value == "" || k.Anchor != "" {
				return r4c.Errorf(r4c.BadSource, string(f.path), "", "YAML line %d: keys must be non-empty scalars", k.Line)
			}
			if at, dup := seen[k.Value]; dup {
				key := k.Value
				if len(f.path) > 0 {
					key = string(f.path) + "." + k.Value
				}
				return r4c.Errorf(r4c.DuplicateKey, key, "", "given twice in one mapping, on YAML lines %d and %d: give it once, with all that is under it", at, k.Line)
			} else if seen != nil {
				seen[k.Value] = k.Line
			}
			mark := len(f.path)
			if mark > 0 {
				f.path = append(f.path, '.')
			}
			if len(f.path)+len(k.Value) > maxKeyLen {
				key := string(append(f.path, k.Value...))
				f.path = f.path[:mark]
				return r4c.Errorf(r4c.BadSource, key, "", "YAML line %d: the key is longer than %d bytes", k.Line, maxKeyLen)
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
			return r4c.Errorf(r4c.BadSource, key, "", "YAML line %d: the value is empty", n.Line)
		}
		if at, dup := f.lines[key]; dup {
			return r4c.Errorf(r4c.DuplicateKey, key, "", "set twice in one source, by the values on YAML lines %d and %d", at, n.Line)
		}
		f.lines[key] = n.Line
		f.props[key] = n.Value
		return nil
	}
	return r4c.Errorf(r4c.BadSource, string(f.path), "", "YAML line %d: expected a mapping or a scalar value", n.Line)
}
