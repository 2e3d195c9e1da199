// Command surface counts the exported names of the module's public packages and fails
// when there are too many: the project's measure of how much a user has to read.
//
//	go run ./internal/surface [-max-total N] [-max-package N] [-list] [root]
//
// A name is an exported function, type, method, constant, variable or interface method
// of a package a user can import: struct fields are not counted, nor tests, nor the
// packages under internal/, examples/, bench/, cmd/ or testdata/. It prints one row per
// package, largest first, then the total; with -list, every name counted. It exits 1
// when the total is above -max-total or a package is above -max-package.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// skipped are the directories whose packages a user does not import.
var skipped = []string{"internal", "examples", "bench", "cmd", "testdata"}

// pkgNames is one package's exported names, each as "kind Name" or "method Type.Name".
type pkgNames struct {
	dir   string
	names []string
}

func main() {
	maxTotal := flag.Int("max-total", 0, "fail when the total is above this (0: no limit)")
	maxPackage := flag.Int("max-package", 0, "fail when a package is above this (0: no limit)")
	list := flag.Bool("list", false, "print every counted name")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	pkgs, err := count(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "surface:", err)
		os.Exit(2)
	}
	if !report(os.Stdout, pkgs, *maxTotal, *maxPackage, *list) {
		os.Exit(1)
	}
}

// report prints the table and reports whether every limit holds.
func report(w io.Writer, pkgs []pkgNames, maxTotal, maxPackage int, list bool) bool {
	ok := true
	total := 0
	for _, p := range pkgs {
		total += len(p.names)
		verdict := ""
		if maxPackage > 0 && len(p.names) > maxPackage {
			verdict = fmt.Sprintf("  over the limit of %d", maxPackage)
			ok = false
		}
		fmt.Fprintf(w, "%4d %s%s\n", len(p.names), p.dir, verdict)
		if list {
			for _, n := range p.names {
				fmt.Fprintf(w, "       %s\n", n)
			}
		}
	}
	verdict := ""
	if maxTotal > 0 && total > maxTotal {
		verdict = fmt.Sprintf("  over the limit of %d", maxTotal)
		ok = false
	}
	fmt.Fprintf(w, "surface: %d exported names in %d packages%s\n", total, len(pkgs), verdict)
	return ok
}

// count walks root and returns the exported names of each public package, largest first.
func count(root string) ([]pkgNames, error) {
	var pkgs []pkgNames
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		base := filepath.Base(rel)
		if rel != "." && (slices.Contains(skipped, base) || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			return filepath.SkipDir
		}
		names, err := packageNames(path)
		if err != nil || names == nil {
			return err
		}
		pkgs = append(pkgs, pkgNames{dir: filepath.ToSlash(rel), names: names})
		return nil
	})
	slices.SortStableFunc(pkgs, func(a, b pkgNames) int {
		if len(a.names) != len(b.names) {
			return len(b.names) - len(a.names)
		}
		return strings.Compare(a.dir, b.dir)
	})
	return pkgs, err
}

// packageNames returns the exported names of the non-main package in dir; nil when dir
// holds no such package.
func packageNames(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != "main" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	p, err := doc.NewFromFiles(fset, files, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	add := func(kind string, ns ...string) {
		for _, n := range ns {
			names = append(names, kind+" "+n)
		}
	}
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			add(kind, v.Names...)
		}
	}
	funcs := func(fs []*doc.Func, kind, prefix string) {
		for _, f := range fs {
			add(kind, prefix+f.Name)
		}
	}
	values(p.Consts, "const")
	values(p.Vars, "var")
	funcs(p.Funcs, "func", "")
	for _, t := range p.Types {
		add("type", t.Name)
		values(t.Consts, "const")
		values(t.Vars, "var")
		funcs(t.Funcs, "func", "")
		funcs(t.Methods, "method", t.Name+".")
		for _, sp := range t.Decl.Specs {
			ts, ok := sp.(*ast.TypeSpec)
			if !ok {
				continue
			}
			if it, ok := ts.Type.(*ast.InterfaceType); ok {
				for _, m := range it.Methods.List {
					for _, id := range m.Names {
						if id.IsExported() {
							add("method", t.Name+"."+id.Name)
						}
					}
				}
			}
		}
	}
	return names, nil
}
