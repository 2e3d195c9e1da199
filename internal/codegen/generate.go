package codegen

import (
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/samber/lo"
	"golang.org/x/tools/go/packages"

	"github.com/resilience4go/resilience4go/internal/suggest"
	"github.com/resilience4go/resilience4go/policy"
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

// typeProblem returns what the generated file cannot write of t: a type that does not
// resolve, an unexported type of another package, or a type of an internal package this
// one may not import; "" when it can write all of t.
func (g *generator) typeProblem(t types.Type) string {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.Invalid {
			return "a type that does not resolve"
		}
	case *types.Alias:
		if p := g.objProblem(t.Obj()); p != "" {
			return p
		}
		return g.typeProblem(t.Rhs())
	case *types.Named:
		if p := g.objProblem(t.Obj()); p != "" {
			return p
		}
		for i := range t.TypeArgs().Len() {
			if p := g.typeProblem(t.TypeArgs().At(i)); p != "" {
				return p
			}
		}
	case *types.Pointer:
		return g.typeProblem(t.Elem())
	case *types.Slice:
		return g.typeProblem(t.Elem())
	case *types.Array:
		return g.typeProblem(t.Elem())
	case *types.Chan:
		return g.typeProblem(t.Elem())
	case *types.Map:
		if p := g.typeProblem(t.Key()); p != "" {
			return p
		}
		return g.typeProblem(t.Elem())
	case *types.Tuple:
		for i := range t.Len() {
			if p := g.typeProblem(t.At(i).Type()); p != "" {
				return p
			}
		}
	case *types.Signature:
		if p := g.typeProblem(t.Params()); p != "" {
			return p
		}
		return g.typeProblem(t.Results())
	case *types.Struct:
		for i := range t.NumFields() {
			f := t.Field(i)
			if !f.Exported() && f.Pkg() != g.pkg.Types {
				return "a struct with the unexported field " + f.Name() + " of package " + f.Pkg().Name()
			}
			if p := g.typeProblem(f.Type()); p != "" {
				return p
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			f := t.Method(i)
			if !f.Exported() && f.Pkg() != g.pkg.Types {
				return "an interface with the unexported method " + f.Name() + " of package " + f.Pkg().Name()
			}
			if p := g.typeProblem(f.Type()); p != "" {
				return p
			}
		}
	}
	return ""
}

// objProblem is typeProblem for the name of a named type or an alias.
func (g *generator) objProblem(obj *types.TypeName) string {
	p := obj.Pkg()
	if p == nil || p == g.pkg.Types {
		return ""
	}
	if !obj.Exported() {
		return "the unexported type " + p.Name() + "." + obj.Name()
	}
	if i := strings.LastIndex(p.Path(), "/internal/"); i >= 0 || strings.HasPrefix(p.Path(), "internal/") {
		parent := ""
		if i >= 0 {
			parent = p.Path()[:i]
		}
		if parent != "" && g.pkg.PkgPath != parent && !strings.HasPrefix(g.pkg.PkgPath, parent+"/") || parent == "" {
			return "a type of the internal package " + p.Path()
		}
	}
	return ""
}

// iface is an interface to wrap.
type iface struct {
	name       string
	pos        token.Position // of its name
	constraint string         // the //go:build line of its file, or ""
	methods    []*method      // in the method set's order (sorted by name)
}

// promoted adds to own the doc comments of the methods that d's interface takes from the
// interfaces of the package it embeds, at any depth, unless own has them: a method's
// directives follow it into the interfaces that embed it.
func (g *generator) promoted(d decl, own map[string]decl, seen map[string]bool) {
	for _, f := range d.spec.Type.(*ast.InterfaceType).Methods.List {
		id, ok := f.Type.(*ast.Ident)
		if len(f.Names) > 0 || !ok || seen[id.Name] {
			continue
		}
		e, ok := g.decls[id.Name]
		if !ok {
			continue
		}
		seen[id.Name] = true
		for _, ef := range e.spec.Type.(*ast.InterfaceType).Methods.List {
			for _, n := range ef.Names {
				if _, has := own[n.Name]; !has {
					own[n.Name] = decl{doc: ef.Doc, spec: &ast.TypeSpec{Name: n}, file: e.file}
				}
			}
		}
		g.promoted(e, own, seen)
	}
}

// buildConstraint returns the build constraint of f, the file named name, as a
// //go:build line: its own, and that of a _GOOS or _GOARCH suffix of its name; "" when it
// has neither.
func buildConstraint(f *ast.File, name string) string {
	var terms []string
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				if x, err := constraint.Parse(c.Text); err == nil {
					terms = append(terms, "("+x.String()+")")
				}
			}
		}
	}
	parts := strings.Split(strings.TrimSuffix(filepath.Base(name), ".go"), "_")
	if n := len(parts); n >= 3 && knownOS[parts[n-2]] && knownArch[parts[n-1]] {
		terms = append(terms, parts[n-2], parts[n-1])
	} else if n >= 2 && (knownOS[parts[n-1]] || knownArch[parts[n-1]]) {
		terms = append(terms, parts[n-1])
	}
	if len(terms) == 0 {
		return ""
	}
	x, err := constraint.Parse("//go:build " + strings.Join(terms, " && "))
	if err != nil {
		return ""
	}
	return "//go:build " + x.String()
}

// knownOS and knownArch are the GOOS and GOARCH values that a file name's suffix
// constrains the file to, as the go command reads them.
var (
	knownOS = lo.SliceToMap(strings.Fields("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos"),
		func(s string) (string, bool) { return s, true })
	knownArch = lo.SliceToMap(strings.Fields("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm"),
		func(s string) (string, bool) { return s, true })
)

// method is one method of an interface to wrap.
type method struct {
	name     string
	sig      *types.Signature
	shape    shape
	result   types.Type  // T of (T, error) or *async.Future[T]
	specs    []*spec     // the directives that apply, the method's over the interface's
	fallback fallbackRef // its fallback, if one applies
}

// shape is what a method returns, which says how it is wrapped.
type shape int

const (
	passThrough shape = iota // no directive applies
	valueErr                 // (ctx, …) (T, error)
	errOnly                  // (ctx, …) error
	future                   // (ctx, …) *async.Future[T]
)

// decl is an interface's declaration in the syntax.
type decl struct {
	spec *ast.TypeSpec
	doc  *ast.CommentGroup
	file *ast.File
}

// declarations returns every interface type declared in the package's files, by name,
// except in the file being generated.
func (g *generator) declarations(out string) map[string]decl {
	m := map[string]decl{}
	for _, f := range g.pkg.Syntax {
		if g.fset.Position(f.Package).Filename == out {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.InterfaceType); !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				m[ts.Name.Name] = decl{spec: ts, doc: doc, file: f}
				g.attach(doc)
				for _, field := range ts.Type.(*ast.InterfaceType).Methods.List {
					g.attach(field.Doc)
				}
			}
		}
	}
	return m
}

// attach records the directives of doc as attached to an interface or a method.
func (g *generator) attach(doc *ast.CommentGroup) {
	if doc == nil {
		return
	}
	if g.attached == nil {
		g.attached = map[token.Pos]bool{}
	}
	for _, c := range doc.List {
		g.attached[c.Slash] = true
	}
}

// strayDirectives reports every directive of the package's files, but the generated
// file, that is on no interface and no method of one: on a group of types, a struct, after
// a method on its line, inside an interface after its last method. It would apply to
// nothing.
func (g *generator) strayDirectives(out string) {
	for _, f := range g.pkg.Syntax {
		if g.fset.Position(f.Package).Filename == out {
			continue
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if (strings.HasPrefix(c.Text, prefix) || spaced(c.Text)) && !g.attached[c.Slash] {
					g.ds.add(g.fset.Position(c.Slash), CodeMalformed,
						"this directive applies to nothing: a directive goes in the doc comment of an interface, alone in its type declaration, or of one of its methods")
				}
			}
		}
	}
}

// hasDirective reports whether the interface or one of its methods has a directive.
func hasDirective(d decl) bool {
	has := func(cg *ast.CommentGroup) bool {
		return cg != nil && slices.ContainsFunc(cg.List, func(c *ast.Comment) bool { return strings.HasPrefix(c.Text, prefix) || spaced(c.Text) })
	}
	if has(d.doc) {
		return true
	}
	return slices.ContainsFunc(d.spec.Type.(*ast.InterfaceType).Methods.List, func(f *ast.Field) bool { return has(f.Doc) })
}

// interfaces returns the interfaces to wrap, checked: those named, or every one with a
// directive, sorted by name.
func (g *generator) interfaces(names []string, out string) []*iface {
	decls := g.declarations(out)
	g.decls = decls
	g.strayDirectives(out)
	if len(names) == 0 {
		for n, d := range decls {
			if hasDirective(d) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			g.ds.add(token.Position{Filename: g.pkg.Dir}, CodeBadTarget, "no interface of package %s has a %s directive", g.pkg.Name, prefix)
			return nil
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var ifaces []*iface
	for _, n := range names {
		d, ok := decls[n]
		if !ok {
			msg := fmt.Sprintf("package %s declares no interface %s", g.pkg.Name, n)
			if near := suggest.Closest(n, slices.Sorted(maps.Keys(decls)), maxSuggestDistance); near != "" {
				msg += "; did you mean " + near + "?"
			}
			g.ds.add(token.Position{Filename: g.pkg.Dir}, CodeBadTarget, "%s", msg)
			continue
		}
		if it := g.iface(d); it != nil {
			ifaces = append(ifaces, it)
		}
	}
	g.checkShared(ifaces)
	return ifaces
}

// checkShared reports two directives that share an instance by name and give one of its
// attributes different values, which would fail the constructor with R4C-REG-008. An
// attribute one of them leaves out may be the other's default, so it is left to the
// constructor, which compares the whole configurations.
func (g *generator) checkShared(ifaces []*iface) {
	type key struct {
		layer string
		name  string
	}
	first := map[key]*spec{}
	for _, it := range ifaces {
		for _, m := range it.methods {
			for _, s := range m.specs {
				name, ok := s.vals["name"]
				if !ok || s.def.layer == "" {
					continue
				}
				k := key{string(s.def.layer), name}
				f, seen := first[k]
				if !seen {
					first[k] = s
					continue
				}
				if f == s {
					continue
				}
				for _, attr := range slices.Sorted(maps.Keys(s.vals)) {
					if v, ok := f.vals[attr]; ok && v != s.vals[attr] {
						g.ds.add(s.d.pos, policy.CodeConflict, "the %s named %s is declared at %s:%d with %s %s, here with %s",
							s.def.layer, name, filepath.Base(f.d.pos.Filename), f.d.pos.Line, attr, v, s.vals[attr])
						first[k] = s // one report per directive
						break
					}
				}
			}
		}
	}
}

// iface checks the interface of d and the directives of it and its methods.
func (g *generator) iface(d decl) *iface {
	pos := g.fset.Position(d.spec.Name.Pos())
	if d.spec.TypeParams != nil {
		g.ds.add(pos, CodeBadTarget, "%s is generic: only an interface without type parameters can be wrapped", d.spec.Name.Name)
		return nil
	}
	start, end := g.fset.Position(d.spec.Pos()), g.fset.Position(d.spec.End())
	bad := false
	inFile := g.typeErrs[start.Filename] // sorted by line
	for i := sort.Search(len(inFile), func(i int) bool { return inFile[i].pos.Line >= start.Line }); i < len(inFile) && inFile[i].pos.Line <= end.Line; i++ {
		g.ds.add(inFile[i].pos, CodeBadTarget, "%s: %s", d.spec.Name.Name, inFile[i].msg)
		bad = true
	}
	if bad {
		return nil
	}
	obj, _ := g.pkg.Types.Scope().Lookup(d.spec.Name.Name).(*types.TypeName)
	if obj == nil {
		g.ds.add(pos, CodeBadTarget, "%s is not a type of the package", d.spec.Name.Name)
		return nil
	}
	it, ok := obj.Type().Underlying().(*types.Interface)
	if !ok || !it.IsMethodSet() {
		g.ds.add(pos, CodeBadTarget, "%s is a constraint, not an interface a value can have", d.spec.Name.Name)
		return nil
	}
	r := &resolver{pkg: g.pkg.Types, file: d.file, im: g.im(), ds: g.ds, refs: g.refs, load: g.load}
	topDs := directives(g.fset, d.doc, g.ds)
	for _, n := range topDs {
		if strings.EqualFold(n.name, noneDirective) {
			g.ds.add(n.pos, CodeMalformed, "%s%s goes on a method, to leave the interface's directives off it", prefix, noneDirective)
		}
	}
	top := g.specs(r, lo.Reject(topDs, func(d *directive, _ int) bool { return strings.EqualFold(d.name, noneDirective) }))
	own := map[string]decl{} // each method's own directives, by method name
	for _, f := range d.spec.Type.(*ast.InterfaceType).Methods.List {
		if len(f.Names) == 0 { // an embedded interface
			for _, e := range directives(g.fset, f.Doc, g.ds) {
				g.ds.add(e.pos, CodeMalformed, "%s%s on an embedded interface: put it on %s, or on each method", prefix, e.name, d.spec.Name.Name)
			}
		}
		for _, n := range f.Names {
			own[n.Name] = decl{doc: f.Doc, spec: &ast.TypeSpec{Name: n}, file: d.file}
		}
	}
	g.promoted(d, own, map[string]bool{d.spec.Name.Name: true})
	out := &iface{name: obj.Name(), pos: pos, constraint: buildConstraint(d.file, g.fset.Position(d.file.Package).Filename)}
	for i := range it.NumMethods() {
		fn := it.Method(i)
		m := &method{name: fn.Name(), sig: fn.Type().(*types.Signature)}
		var mine []*spec
		mpos := g.fset.Position(fn.Pos())
		if fn.Pkg() != g.pkg.Types {
			mpos = pos // a method of an interface of another package, embedded
		}
		if !fn.Exported() && fn.Pkg() != g.pkg.Types {
			g.ds.add(mpos, CodeBadTarget, "%s embeds the unexported method %s of package %s, which no type outside it can implement",
				obj.Name(), fn.Name(), fn.Pkg().Name())
			continue
		}
		if problem := g.typeProblem(m.sig); problem != "" {
			g.ds.add(mpos, CodeBadTarget, "%s: its signature has %s, which the generated code cannot name", m.name, problem)
			continue
		}
		none := false
		if od, ok := own[m.name]; ok {
			ds := directives(g.fset, od.doc, g.ds)
			if n, ok := lo.Find(ds, func(d *directive) bool { return strings.EqualFold(d.name, noneDirective) }); ok {
				none = true
				if len(ds) > 1 || len(n.attrs) > 0 {
					g.ds.add(n.pos, CodeMalformed, "%s: %s%s stands alone: it takes no attribute and no other directive", m.name, prefix, noneDirective)
				}
				ds = nil
			}
			rr := r
			if od.file != d.file { // a method of an embedded interface, declared in another file
				rr = &resolver{pkg: r.pkg, file: od.file, im: r.im, ds: r.ds, refs: r.refs, load: r.load}
			}
			mine = g.specs(rr, ds)
		}

		// The method's directives replace the interface's of the same policy. The
		// interface's apply to the methods that can be guarded: a Close() or a String()
		// passes through.
		m.specs = append([]*spec(nil), mine...)
		for _, s := range top {
			if none || len(mine) == 0 && !guardable(m.sig) {
				break
			}
			if !slices.ContainsFunc(mine, func(o *spec) bool { return o.def == s.def }) {
				m.specs = append(m.specs, s)
			}
		}
		if len(m.specs) > 0 {
			at := mpos
			if len(mine) > 0 {
				at = mine[0].d.pos
			}
			g.checkMethod(r, it, m, at)
		}
		out.methods = append(out.methods, m)
	}
	return out
}

// im returns the imports of the file being generated; one for the whole run.
func (g *generator) im() *imports {
	if g.imports == nil {
		g.imports = newImports(g.pkg.Types, reservedNames...)
	}
	return g.imports
}
