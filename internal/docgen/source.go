package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// pkgSource is the parsed non-test Go files of one package, with their comments.
type pkgSource struct {
	files []*ast.File
	text  string // every file's text, one after another
}

// readPackage parses the non-test Go files of the package in dir (relative to root).
func readPackage(root, dir string) (*pkgSource, error) {
	full := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil, err
	}
	src := &pkgSource{}
	fset := token.NewFileSet()
	var text strings.Builder
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(full, name))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, b, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		src.files = append(src.files, f)
		text.Write(b)
		text.WriteByte('\n')
	}
	src.text = text.String()
	return src, nil
}

// valueSpecs calls fn for each const or var spec of the package (tok), with its doc: the
// spec's own, else its declaration's when the declaration has one spec, else its
// trailing line comment.
func (s *pkgSource) valueSpecs(tok token.Token, fn func(spec *ast.ValueSpec, doc string)) {
	for _, f := range s.files {
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != tok {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				doc := vs.Doc
				if doc == nil && len(g.Specs) == 1 {
					doc = g.Doc
				}
				if doc == nil {
					doc = vs.Comment
				}
				fn(vs, oneLine(doc.Text()))
			}
		}
	}
}

// sentinels returns the package's exported error variables (named Err…), with their doc.
func (s *pkgSource) sentinels() []sentinel {
	var out []sentinel
	s.valueSpecs(token.VAR, func(vs *ast.ValueSpec, doc string) {
		for _, n := range vs.Names {
			if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
				out = append(out, sentinel{Name: n.Name, Doc: strings.TrimPrefix(doc, n.Name+" ")})
			}
		}
	})
	return out
}

// eventDoc returns the doc of the variable that registers the event kind name (a
// registration whose value holds the string literal "name", as the kind's name),
// without its leading `EventX ("name"): `.
func (s *pkgSource) eventDoc(name string) string {
	var found string
	s.valueSpecs(token.VAR, func(vs *ast.ValueSpec, doc string) {
		for _, v := range vs.Values {
			ast.Inspect(v, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Value == strconv.Quote(name) {
					found = doc
				}
				return true
			})
		}
	})
	if i := strings.Index(found, "): "); i >= 0 && strings.Contains(found[:i], strconv.Quote(name)) {
		found = found[i+3:]
	}
	return upperFirst(found)
}

// codeRE matches an R4C code.
var codeRE = regexp.MustCompile(`R4C-[A-Z]{3}-\d{3}`)

// codesNamed returns the codes of all whose code the package's sources name (in comments
// or strings), in all's order.
func (s *pkgSource) codesNamed(all []code) []codeRef {
	named := map[string]bool{}
	for _, c := range codeRE.FindAllString(s.text, -1) {
		named[c] = true
	}
	var out []codeRef
	for _, c := range all {
		if named[c.Code] {
			out = append(out, codeRef{Code: c.Code, Meaning: c.Meaning})
		}
	}
	return out
}

// oneLine joins a comment's lines into one, with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
