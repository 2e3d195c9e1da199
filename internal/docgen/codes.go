package main

import (
	"go/ast"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// code is one R4C error code, as a constant of the module declares it.
type code struct {
	Code     string // e.g. "R4C-ATR-001"
	Constant string // where it is declared, e.g. "r4c.BadDuration"
	Package  string // the declaring package's directory, e.g. "internal/r4c"
	Meaning  string // the constant's comment, without its name
}

// skipDirs are the directories whose code is not the module's: other modules, examples,
// the site.
var skipDirs = map[string]bool{".git": true, "bench": true, "examples": true, "docs": true, "testdata": true}

// scanCodes returns every R4C code a string constant of the module's non-test code
// declares, sorted by code; a code declared twice is listed once, from internal/r4c (the
// shared list) when it is declared there.
func scanCodes(root string) ([]code, error) {
	byCode := map[string]code{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		src, err := readPackage(root, rel)
		if err != nil {
			return err
		}
		pkg := filepath.Base(path)
		if len(src.files) > 0 {
			pkg = src.files[0].Name.Name
		}
		src.valueSpecs(token.CONST, func(vs *ast.ValueSpec, doc string) {
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil || codeRE.FindString(v) != v {
					continue
				}
				c := code{Code: v, Constant: pkg + "." + n.Name, Package: rel, Meaning: meaning(doc, n.Name, v)}
				if old, dup := byCode[v]; dup && old.Package == "internal/r4c" {
					continue
				}
				byCode[v] = c
			}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]code, 0, len(byCode))
	for _, c := range byCode {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out, nil
}

// meaning returns a constant's comment without what only names it: a leading
// "name, CODE, ", "name is the code of ", "name is ".
func meaning(doc, name, value string) string {
	m := doc
	for _, prefix := range []string{name + ", " + value + ", ", name + " is the code of ", name + " is "} {
		if rest, ok := strings.CutPrefix(m, prefix); ok {
			m = rest
			break
		}
	}
	return m
}
