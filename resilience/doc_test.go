package resilience_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingProse matches prose that counts the fields or items next to it ("the three
// above", "these two fields"): such a count goes stale when a field is added or removed
// (fault: Snapshot's doc said "the three above" over five fields).
var countingProse = regexp.MustCompile(`(?i)\b(two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(above|below|fields|preceding|following)\b`)

// The doc comments of the package's types and of their fields do not count fields in
// prose: they name them, or say "the others".
func TestDoc_TypesDoNotCountTheirFieldsInProse(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			require.NoError(t, err)
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/resilience4go/resilience4go/resilience")
	require.NoError(t, err)
	checked := false
	for _, typ := range p.Types {
		texts := []string{typ.Doc}
		for _, spec := range typ.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, f := range st.Fields.List {
				texts = append(texts, f.Doc.Text(), f.Comment.Text())
			}
		}
		for _, text := range texts {
			require.False(t, countingProse.MatchString(text), "the doc of %s counts in prose: %q", typ.Name, countingProse.FindString(text))
		}
		checked = checked || typ.Name == "Snapshot"
	}
	require.True(t, checked, "Snapshot was checked")
}
