package codegen

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/samber/lo"
)

// prefix starts every directive. Like //go:generate, it has no space after the slashes,
// so go doc leaves directives out of the documentation.
const prefix = "//resilience:"

// directive is one //resilience: comment, e.g.
// //resilience:ratelimiter permits=10 period=1s.
type directive struct {
	name  string         // as written, e.g. "ratelimiter"
	pos   token.Position // of the name
	attrs []attribute    // in the order written
}

// attribute is one key=value of a directive.
type attribute struct {
	key, value string
	pos        token.Position // of the key
	valuePos   token.Position // of the value
	quoted     bool           // the value was written as a Go quoted string
}

// attr returns the attribute named key, if the directive has it.
func (d *directive) attr(key string) (attribute, bool) {
	for _, a := range d.attrs {
		if a.key == key {
			return a, true
		}
	}
	return attribute{}, false
}

// directives returns the directives of a doc comment, reporting malformed ones to ds.
func directives(fset *token.FileSet, doc *ast.CommentGroup, ds *diags) []*directive {
	if doc == nil {
		return nil
	}
	var out []*directive
	for _, c := range doc.List {
		if spaced(c.Text) {
			ds.add(fset.Position(c.Slash), CodeUnknownDirective, "with a space after the slashes, this directive is a plain comment: write %s%s",
				prefix, strings.TrimPrefix(strings.TrimLeft(c.Text[2:], " "), "resilience:"))
			continue
		}
		if !strings.HasPrefix(c.Text, prefix) {
			continue
		}
		if d := parseDirective(c.Text, fset.Position(c.Slash), ds); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// spaced reports whether text is a directive written with spaces after the slashes,
// "// resilience:retry", which Go takes for prose; "// resilience: …", a word then a
// space, is prose.
func spaced(text string) bool {
	rest := strings.TrimLeft(strings.TrimPrefix(text, "//"), " ") // a tab starts a doc comment's code block
	after, ok := strings.CutPrefix(rest, "resilience:")
	return strings.HasPrefix(text, "//") && len(rest) < len(text)-2 && ok && after != "" && !isSpace(after[0])
}

// parseDirective parses text, a comment that starts with prefix, at pos. It returns nil
// when the directive has no name; an attribute that is malformed is reported and left
// out. The work is linear in the length of text.
func parseDirective(text string, pos token.Position, ds *diags) *directive {
	at := func(off int) token.Position {
		p := pos
		p.Offset += off
		p.Column += off
		return p
	}
	i := len(prefix)
	end := i
	for end < len(text) && !isSpace(text[end]) {
		end++
	}
	if end == i {
		ds.add(at(0), CodeUnknownDirective, "a directive names its policy right after %q, e.g. %sratelimiter", prefix, prefix)
		return nil
	}
	d := &directive{name: text[i:end], pos: at(i)}
	seen := map[string]bool{}
	for i = end; ; {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i >= len(text) {
			break
		}
		start := i
		for i < len(text) && !isSpace(text[i]) && text[i] != '=' {
			i++
		}
		key := text[start:i]
		if i >= len(text) || text[i] != '=' {
			msg := fmt.Sprintf("%s %s: an attribute is written key=value", d.name, key)
			if len(d.attrs) > 0 && strings.HasSuffix(d.attrs[len(d.attrs)-1].value, ",") {
				msg += "; a list has no spaces after its commas, or is quoted"
			} else if def, ok := lookupDirective(d.name); ok {
				msg += "; the attributes of " + def.name + " are " + strings.Join(lo.Map(def.allOptions(), func(o option, _ int) string { return o.Name }), ", ")
			}
			ds.add(at(start), CodeMalformed, "%s", msg)
			continue
		}
		if key == "" {
			ds.add(at(start), CodeMalformed, "%s: an attribute has no name before its \"=\"", d.name)
		}
		i++ // the '='
		vstart := i
		var value string
		if i < len(text) && text[i] == '"' {
			q, err := strconv.QuotedPrefix(text[i:])
			if err != nil {
				ds.add(at(vstart), CodeMalformed, "%s %s: the quoted value is not closed or not a Go string", d.name, key)
				return d
			}
			value, _ = strconv.Unquote(q)
			i += len(q)
			if value == "" {
				ds.add(at(vstart), CodeMalformed, "%s %s: the value is empty", d.name, key)
				continue
			}
			if i < len(text) && !isSpace(text[i]) {
				ds.add(at(i), CodeMalformed, "%s %s: a space must follow the quoted value", d.name, key)
				for i < len(text) && !isSpace(text[i]) {
					i++
				}
				continue
			}
		} else {
			for i < len(text) && !isSpace(text[i]) {
				i++
			}
			value = text[vstart:i]
			if value == "" {
				ds.add(at(start), CodeMalformed, "%s %s: the value is empty", d.name, key)
				continue
			}
		}
		if key == "" {
			continue
		}
		if seen[key] {
			ds.add(at(start), CodeMalformed, "%s %s: the attribute is given twice", d.name, key)
			continue
		}
		seen[key] = true
		d.attrs = append(d.attrs, attribute{key: key, value: value, pos: at(start), valuePos: at(vstart), quoted: text[vstart] == '"'})
	}
	return d
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' }
