package codegen

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/samber/lo"
)

// buildConstraint returns the terms of the build constraint of f, the file named name: its
// //go:build line (or, without one, its // +build lines), the _GOOS and _GOARCH suffixes
// of its name, and cgo if it imports "C". Join writes them as one line.
func buildConstraint(f *ast.File, name string) []constraint.Expr {
	var terms, plus []constraint.Expr
	goBuild := false
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			switch {
			case constraint.IsGoBuild(c.Text):
				if x, err := constraint.Parse(c.Text); err == nil {
					terms, goBuild = append(terms, x), true
				}
			case constraint.IsPlusBuild(c.Text):
				if x, err := constraint.Parse(c.Text); err == nil {
					plus = append(plus, x)
				}
			}
		}
	}
	if !goBuild {
		terms = append(terms, plus...)
	}
	parts := strings.Split(strings.TrimSuffix(filepath.Base(name), ".go"), "_")
	if n := len(parts); n >= 3 && knownOS[parts[n-2]] && knownArch[parts[n-1]] {
		terms = append(terms, &constraint.TagExpr{Tag: parts[n-2]}, &constraint.TagExpr{Tag: parts[n-1]})
	} else if n >= 2 && (knownOS[parts[n-1]] || knownArch[parts[n-1]]) {
		terms = append(terms, &constraint.TagExpr{Tag: parts[n-1]})
	}
	// A file that imports "C" is compiled with cgo only. The syntax the package was loaded
	// with is cgo's translation, without that import: the file is read again.
	if src, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly); err == nil {
		for _, is := range src.Imports {
			if is.Path.Value == `"C"` {
				terms = append(terms, &constraint.TagExpr{Tag: "cgo"})
				break
			}
		}
	}
	return terms
}

// joinConstraints returns the //go:build line that requires every term, each once, in a
// stable order, or "" for none: "linux && linux" is "linux", and "amd64 && linux" the
// same line whichever file or suffix each came from.
func joinConstraints(terms []constraint.Expr) string {
	var flat []string
	var walk func(x constraint.Expr)
	walk = func(x constraint.Expr) {
		switch x := x.(type) {
		case *constraint.AndExpr:
			walk(x.X)
			walk(x.Y)
		case *constraint.OrExpr:
			flat = append(flat, "("+x.String()+")")
		default:
			flat = append(flat, x.String())
		}
	}
	for _, t := range terms {
		walk(t)
	}
	if len(flat) == 0 {
		return ""
	}
	slices.Sort(flat)
	return "//go:build " + strings.Join(slices.Compact(flat), " && ")
}

// knownOS and knownArch are the GOOS and GOARCH values that a file name's suffix
// constrains the file to, as the go command reads them.
var (
	knownOS = lo.SliceToMap(strings.Fields("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos"),
		func(s string) (string, bool) { return s, true })
	knownArch = lo.SliceToMap(strings.Fields("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm"),
		func(s string) (string, bool) { return s, true })
)
