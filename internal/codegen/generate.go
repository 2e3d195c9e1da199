package codegen

import (
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// DefaultOutput is the name of the generated file, in the package's directory, when
// Config.Output is empty.
const DefaultOutput = "resilient_gen.go"

// Config says what to generate.
type Config struct {
	Dir    string   // the package's directory; "" is the current directory
	Types  []string // the interfaces to wrap; none: every interface with a directive
	Output string   // the generated file's name or path, relative to Dir; "" is DefaultOutput
}

// Result is a generated file.
type Result struct {
	Path   string // where it belongs: Config.Output, made absolute
	Source []byte // its contents, gofmt-formatted
}

// Generate reads the package in cfg.Dir and returns the file of resilient wrappers for
// its interfaces. Errors in the directives are returned together, as Diagnostics; an
// error loading the package is returned as is. The package may hold an earlier version of
// the generated file: it is read as if empty, so that a stale one does not stop its own
// regeneration.
func Generate(cfg Config) (*Result, error) {
	dir, err := filepath.Abs(cmp(cfg.Dir, "."))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	out := cmp(cfg.Output, DefaultOutput)
	if !filepath.IsAbs(out) {
		out = filepath.Join(dir, out)
	}
	if d := filepath.Dir(out); d != dir && !sameDir(d, dir) {
		return nil, fmt.Errorf("%s: the generated file goes in the package's directory, %s", out, dir)
	}
	if src, err := os.ReadFile(out); err == nil && len(src) > 0 && !generatedHeader.Match(src) {
		return nil, fmt.Errorf("%s exists and is not generated code (it has no %q line): it is left as it is", out, header)
	}
	overlay := map[string][]byte{}
	if _, err := os.Stat(out); err == nil {
		if name := packageName(dir, out); name != "" {
			overlay[out] = []byte("package " + name + "\n")
		}
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Dir:     dir,
		Overlay: overlay,
	}, ".")
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("%s: %d packages, want 1", dir, len(pkgs))
	}
	pkg := pkgs[0]
	var ds diags
	var typeErrs []packages.Error
	for _, e := range pkg.Errors {
		if e.Kind == packages.TypeError { // it may be in code that uses the stale file
			typeErrs = append(typeErrs, e)
			continue
		}
		if strings.HasPrefix(e.Msg, "# "+pkg.PkgPath+"\n") {
			continue // the compiler's report of the type errors above, when go list built export data
		}
		ds.add(position(e.Pos, dir), CodeBadTarget, "%s", e.Msg)
	}
	if len(ds.list) > 0 || pkg.Types == nil {
		if len(ds.list) == 0 {
			ds.add(token.Position{Filename: dir}, CodeBadTarget, "the package does not load")
		}
		return nil, ds.list.sorted()
	}
	g := &generator{pkg: pkg, fset: pkg.Fset, ds: &ds, refs: map[string]bool{}, typeErrs: map[string][]typeError{}}
	for _, e := range typeErrs {
		p := position(e.Pos, dir)
		g.typeErrs[p.Filename] = append(g.typeErrs[p.Filename], typeError{p, e.Msg})
	}
	for _, errs := range g.typeErrs {
		slices.SortStableFunc(errs, func(a, b typeError) int { return a.pos.Line - b.pos.Line })
	}
	ifaces := g.interfaces(cfg.Types, out)
	if len(ds.list) > 0 {
		return nil, ds.list.sorted()
	}
	src := g.emit(ifaces)
	if len(ds.list) > 0 {
		return nil, ds.list.sorted()
	}
	formatted, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("formatting the generated code: %w\n%s", err, src)
	}
	return &Result{Path: out, Source: formatted}, nil
}

// generatedHeader matches Go's line for generated files, anywhere in a file (a file with
// merge conflicts has it below a marker).
var generatedHeader = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// sameDir reports whether a and b are one directory, through symbolic links.
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// packageName returns the package name of the Go files of dir, other than out and the
// tests, read from their package clauses; "" if none has one. A generated file is read as
// this name alone, whatever it holds: empty, of an old package name, or half merged.
func packageName(dir, out string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if f == out || strings.HasSuffix(f, "_test.go") {
			continue
		}
		if pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly); err == nil && pf.Name.Name != "documentation" {
			return pf.Name.Name
		}
	}
	return ""
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// position parses the "file:line:col" of a packages.Error; a relative file name is made
// absolute from dir.
func position(s, dir string) token.Position {
	var p token.Position
	parts := strings.Split(s, ":")
	p.Filename = parts[0]
	if p.Filename != "" && p.Filename != "-" && !filepath.IsAbs(p.Filename) {
		p.Filename = filepath.Join(dir, p.Filename)
	}
	if len(parts) > 1 {
		fmt.Sscan(parts[1], &p.Line)
	}
	if len(parts) > 2 {
		fmt.Sscan(parts[2], &p.Column)
	}
	return p
}

// typeError is a type error of the package, at its position.
type typeError struct {
	pos token.Position
	msg string
}

// generator holds what one run knows of the package.
type generator struct {
	pkg     *packages.Package
	fset    *token.FileSet
	ds      *diags
	imports *imports        // of the generated file
	refs    map[string]bool // the package-level names the generated code refers to
	// typeErrs are the package's type errors, by file, sorted by line; those inside an
	// interface to wrap are reported, the others (in code that uses a stale generated
	// file) are not.
	typeErrs map[string][]typeError
	decls    map[string]decl // the package's interfaces, by name
	// methods and nearFallbacks memoize methodsOf and nearFallback.
	methods       map[*types.Interface]map[string]*types.Func
	nearFallbacks map[any]string
	attached      map[token.Pos]bool        // the comments in the doc of an interface or a method
	loaded        map[string]*types.Package // the packages load found, by import path
}

// load returns the package at an import path, loaded from the package's directory, or nil
// when there is none or it does not load; each path is loaded once.
func (g *generator) load(path string) *types.Package {
	if p, ok := g.loaded[path]; ok {
		return p
	}
	var found *types.Package
	if token.IsIdentifier(path) || strings.Contains(path, "/") || strings.Contains(path, ".") {
		pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: g.pkg.Dir}, "pattern="+path)
		if err == nil && len(pkgs) == 1 && len(pkgs[0].Errors) == 0 && pkgs[0].PkgPath == path {
			found = pkgs[0].Types
		}
	}
	if g.loaded == nil {
		g.loaded = map[string]*types.Package{}
	}
	g.loaded[path] = found
	return found
}

// im returns the imports of the file being generated; one for the whole run.
func (g *generator) im() *imports {
	if g.imports == nil {
		g.imports = newImports(g.pkg.Types, reservedNames...)
	}
	return g.imports
}
