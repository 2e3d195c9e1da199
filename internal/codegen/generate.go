package codegen

import (
	"bytes"
	"fmt"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	if err := checkOutputName(out); err != nil {
		return nil, err
	}
	if src, err := os.ReadFile(out); err == nil && len(src) > 0 && !isGenerated(src) {
		return nil, fmt.Errorf("%s exists and is not generated code (it has no %q line): it is left as it is", out, header)
	}
	// The file being written is read as its package clause alone, and so is another file
	// this command generated that no longer parses (merge conflict markers): neither
	// stops the package from loading.
	overlay := map[string][]byte{}
	if name := packageName(dir, out); name != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if _, perr := parser.ParseFile(token.NewFileSet(), f, src, parser.SkipObjectResolution); f == out || perr != nil && ours(src) {
				overlay[f] = []byte("package " + name + "\n")
			}
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
		ds.add(position(e.Pos, dir), CodeBadTarget, "%s", oneLine(e.Msg))
	}
	if len(ds.list) > 0 || pkg.Types == nil {
		if len(ds.list) == 0 {
			ds.add(token.Position{Filename: dir}, CodeBadTarget, "the package does not load")
		}
		return nil, ds.list.sorted()
	}
	g := &generator{pkg: pkg, fset: pkg.Fset, ds: &ds, refs: map[string]bool{}, refFiles: map[string]bool{}, typeErrs: map[string][]typeError{}}
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

// generatedHeader matches Go's line for generated files, on a line of its own before the
// package clause (a file with merge conflicts has it below a marker; a checkout with CRLF
// line ends has a \r after it).
var generatedHeader = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.\r?$`)

// packageClause finds the package clause of a Go file.
var packageClause = regexp.MustCompile(`(?m)^package `)

// isGenerated reports whether src is a generated Go file: the line that says so comes
// before its package clause.
func isGenerated(src []byte) bool {
	if loc := packageClause.FindIndex(src); loc != nil {
		src = src[:loc[0]]
	}
	return generatedHeader.Match(src)
}

// ours reports whether src was generated by this command.
func ours(src []byte) bool {
	return isGenerated(src) && bytes.Contains(src, []byte(header))
}

// checkOutputName returns an error when the go command would leave the file named out out
// of the package's build, or build it on some platforms only: a name that is not a .go
// file, starts with _ or ., ends in _test.go, or in a GOOS or GOARCH suffix.
func checkOutputName(out string) error {
	base := filepath.Base(out)
	parts := strings.Split(strings.TrimSuffix(base, ".go"), "_")
	last := parts[len(parts)-1]
	switch {
	case !strings.HasSuffix(base, ".go"), strings.HasPrefix(base, "_"), strings.HasPrefix(base, "."),
		strings.HasSuffix(base, "_test.go"), len(parts) > 1 && (knownOS[last] || knownArch[last]):
		return fmt.Errorf("%s: the generated file is a .go file that every build of the package compiles: not a test, not hidden by _ or ., without a _GOOS or _GOARCH suffix", out)
	}
	return nil
}

// sameDir reports whether a and b are one directory, through symbolic links.
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// packageName returns the package name of the Go files of dir that the build compiles,
// other than out, the tests and the files this command generated, read from their package
// clauses; "" if none has one.
func packageName(dir, out string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if f == out || strings.HasSuffix(f, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, filepath.Base(f)); err != nil || !ok {
			continue // a file the build leaves out: ignored by its constraint, or named _x.go
		}
		if pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly); err == nil && !ours(mustRead(f)) {
			return pf.Name.Name
		}
	}
	return ""
}

// mustRead returns the contents of the file f, or nothing if it cannot be read.
func mustRead(f string) []byte {
	src, _ := os.ReadFile(f)
	return src
}

// oneLine returns msg, an error of go list or of the type checker, on one line: its
// continuation lines joined with "; ".
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ; ")), " ")
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
	// From the right: the column and the line, when they are numbers; the rest is the
	// file's name, which may hold a colon (C:\dir\file.go).
	n := len(parts)
	for k := 0; k < 2 && n > 1; k++ {
		v, err := strconv.Atoi(parts[n-1])
		if err != nil {
			break
		}
		p.Column, p.Line = p.Line, v
		n--
	}
	p.Filename = strings.Join(parts[:n], ":")
	if p.Filename != "" && p.Filename != "-" && !filepath.IsAbs(p.Filename) {
		p.Filename = filepath.Join(dir, p.Filename)
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
	pkg      *packages.Package
	fset     *token.FileSet
	ds       *diags
	imports  *imports        // of the generated file
	refs     map[string]bool // the package-level names the generated code refers to
	refFiles map[string]bool // the files that declare them
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
	if importable(path, g.pkg.PkgPath) {
		pkgs, err := packages.Load(&packages.Config{
			Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps,
			Dir:  g.pkg.Dir,
		}, "pattern="+path)
		if err == nil && len(pkgs) == 1 && len(pkgs[0].Errors) == 0 && pkgs[0].PkgPath == path &&
			pkgs[0].Name != "main" && !dependsOn(pkgs[0], g.pkg.PkgPath, map[string]bool{}) {
			found = pkgs[0].Types
		}
	}
	if g.loaded == nil {
		g.loaded = map[string]*types.Package{}
	}
	g.loaded[path] = found
	return found
}

// importable reports whether a package at path may be imported by the package self, as
// far as the path says: not self, not a pattern (std, cmd, all, ./x, a/...), not vendored,
// not internal to another tree.
func importable(path, self string) bool {
	switch {
	case path == self, path == "std", path == "cmd", path == "all", path == "main",
		strings.Contains(path, "..."), strings.HasPrefix(path, "."), strings.HasPrefix(path, "/"),
		path == "vendor", strings.HasPrefix(path, "vendor/"), strings.Contains(path, "/vendor/"):
		return false
	}
	return internalAllowed(path, self)
}

// internalAllowed reports whether self may import path under Go's rule for internal
// packages: a path with an element "internal" is importable only from the tree rooted at
// that element's parent.
func internalAllowed(path, self string) bool {
	elems := strings.Split(path, "/")
	for i := len(elems) - 1; i >= 0; i-- { // the last "internal" is the narrowest tree
		if elems[i] != "internal" {
			continue
		}
		parent := strings.Join(elems[:i], "/")
		if parent == "" { // the standard library's internal packages
			return isStd(self)
		}
		return self == parent || strings.HasPrefix(self, parent+"/")
	}
	return true
}

// isStd reports whether path is a standard library package's: its first element has no dot.
func isStd(path string) bool { return !strings.Contains(strings.Split(path, "/")[0], ".") }

// dependsOn reports whether p imports the package at path, at any depth.
func dependsOn(p *packages.Package, path string, seen map[string]bool) bool {
	for ip, dep := range p.Imports {
		if ip == path {
			return true
		}
		if !seen[ip] {
			seen[ip] = true
			if dependsOn(dep, path, seen) {
				return true
			}
		}
	}
	return false
}

// im returns the imports of the file being generated; one for the whole run.
func (g *generator) im() *imports {
	if g.imports == nil {
		g.imports = newImports(g.pkg.Types, reservedNames...)
	}
	return g.imports
}
