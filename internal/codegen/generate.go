package codegen

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	overlay := map[string][]byte{}
	if src, err := os.ReadFile(out); err == nil {
		if f, err := parser.ParseFile(token.NewFileSet(), out, src, parser.PackageClauseOnly); err == nil {
			overlay[out] = []byte("package " + f.Name.Name + "\n")
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
		ds.add(position(e.Pos), CodeBadTarget, "%s", e.Msg)
	}
	if len(ds.list) > 0 || pkg.Types == nil {
		if len(ds.list) == 0 {
			ds.add(token.Position{Filename: dir}, CodeBadTarget, "the package does not load")
		}
		return nil, ds.list.sorted()
	}
	g := &generator{pkg: pkg, fset: pkg.Fset, ds: &ds, refs: map[string]bool{}, typeErrs: typeErrs}
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

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// position parses the "file:line:col" of a packages.Error.
func position(s string) token.Position {
	var p token.Position
	parts := strings.Split(s, ":")
	p.Filename = parts[0]
	if len(parts) > 1 {
		fmt.Sscan(parts[1], &p.Line)
	}
	if len(parts) > 2 {
		fmt.Sscan(parts[2], &p.Column)
	}
	return p
}

// generator holds what one run knows of the package.
type generator struct {
	pkg     *packages.Package
	fset    *token.FileSet
	ds      *diags
	imports *imports        // of the generated file
	refs    map[string]bool // the package-level names the generated code refers to
	// typeErrs are the package's type errors; those inside an interface to wrap are
	// reported, the others (in code that uses a stale generated file) are not.
	typeErrs []packages.Error
	loaded   map[string]*types.Package // the packages load found, by import path
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

// iface is an interface to wrap.
type iface struct {
	name    string
	methods []*method // in the method set's order (sorted by name)
}

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
			}
		}
	}
	return m
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
	for _, e := range g.typeErrs {
		if p := position(e.Pos); p.Filename == start.Filename && p.Line >= start.Line && p.Line <= end.Line {
			g.ds.add(p, CodeBadTarget, "%s: %s", d.spec.Name.Name, e.Msg)
			bad = true
		}
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
			own[n.Name] = decl{doc: f.Doc, spec: &ast.TypeSpec{Name: n}}
		}
	}
	out := &iface{name: obj.Name()}
	for i := range it.NumMethods() {
		fn := it.Method(i)
		m := &method{name: fn.Name(), sig: fn.Type().(*types.Signature)}
		var mine []*spec
		mpos := g.fset.Position(fn.Pos())
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
			mine = g.specs(r, ds)
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
