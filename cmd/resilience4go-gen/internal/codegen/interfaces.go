package codegen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/suggest"
	"github.com/resilience4go/resilience4go/policy"
)

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
	for name, md := range g.methodDocs(d, seen) {
		if _, has := own[name]; !has {
			own[name] = md.decl
		}
	}
}

// methodDoc is the doc of a method and the interface that declares it.
type methodDoc struct {
	decl
	iface string
}

// methodDocs returns the docs of the methods of d's interface, by name: its own, then
// those of the interfaces of the package it embeds (through an alias or as an instance of
// a generic one), at any depth. A method an interface declares wins over an embedded
// one; two embedded interfaces that give one method directives each are reported.
func (g *generator) methodDocs(d decl, seen map[string]bool) map[string]methodDoc {
	out := map[string]methodDoc{}
	for _, f := range d.spec.Type.(*ast.InterfaceType).Methods.List {
		for _, n := range f.Names {
			out[n.Name] = methodDoc{decl{doc: f.Doc, spec: &ast.TypeSpec{Name: n}, file: d.file}, d.spec.Name.Name}
		}
	}
	embedded := map[string]methodDoc{}
	for _, f := range d.spec.Type.(*ast.InterfaceType).Methods.List {
		if len(f.Names) > 0 {
			continue
		}
		named, ok := types.Unalias(g.pkg.TypesInfo.TypeOf(f.Type)).(*types.Named)
		if !ok || named.Obj().Pkg() != g.pkg.Types {
			continue
		}
		name := named.Origin().Obj().Name()
		e, ok := g.decls[name]
		if !ok || seen[name] {
			continue
		}
		path := maps.Clone(seen)
		path[name] = true
		for m, md := range g.methodDocs(e, path) {
			if _, declared := out[m]; declared {
				continue
			}
			if prev, has := embedded[m]; has {
				if prev.iface != md.iface && hasDirectives(prev.doc) && hasDirectives(md.doc) {
					g.ds.add(g.fset.Position(d.spec.Name.Pos()), CodeMalformed,
						"%s takes %s from both %s and %s, each with directives: declare %s in %s, with the directives it should have",
						d.spec.Name.Name, m, prev.iface, md.iface, m, d.spec.Name.Name)
				}
				continue
			}
			embedded[m] = md
		}
	}
	for m, md := range embedded {
		out[m] = md
	}
	return out
}

// embedsDirectives reports whether one of the methods d's interface takes from the
// interfaces of the package it embeds has directives.
func (g *generator) embedsDirectives(d decl) bool {
	quiet := &generator{pkg: g.pkg, fset: g.fset, ds: &diags{}, decls: g.decls} // its conflicts are reported when d is checked
	for _, md := range quiet.methodDocs(d, map[string]bool{d.spec.Name.Name: true}) {
		if md.iface != d.spec.Name.Name && hasDirectives(md.doc) {
			return true
		}
	}
	return false
}

// hasDirectives reports whether doc holds a directive.
func hasDirectives(doc *ast.CommentGroup) bool { return directiveIn(doc, false) }

// directiveIn reports whether doc holds a directive, or, if spacedToo, one written with a
// space after the slashes (which is reported as an error when doc is read).
func directiveIn(doc *ast.CommentGroup, spacedToo bool) bool {
	return doc != nil && slices.ContainsFunc(doc.List, func(c *ast.Comment) bool {
		return strings.HasPrefix(c.Text, prefix) || spacedToo && spaced(c.Text)
	})
}

// method is one method of an interface to wrap.
type method struct {
	name    string
	sig     *types.Signature
	shape   shape
	result  types.Type // T of (T, error) or *async.Future[T]
	specs   []*spec    // the directives that apply, the method's over the interface's
	handler handlerRef // its method value (a fallback's), if one applies
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
	has := func(cg *ast.CommentGroup) bool { return directiveIn(cg, true) }
	return has(d.doc) || slices.ContainsFunc(d.spec.Type.(*ast.InterfaceType).Methods.List, func(f *ast.Field) bool { return has(f.Doc) })
}

// interfaces returns the interfaces to wrap, checked: those named, or every one with a
// directive, sorted by name.
func (g *generator) interfaces(names []string, out string) []*iface {
	decls := g.declarations(out)
	g.decls = decls
	g.strayDirectives(out)
	if len(names) == 0 {
		for n, d := range decls {
			// A generic interface cannot be wrapped, but its methods' directives follow
			// them into the interfaces that embed an instance of it.
			if d.spec.TypeParams == nil && (hasDirective(d) || g.embedsDirectives(d)) {
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

// checkShared reports two directives of one instance (one layer and one id: a shared name,
// or the Type.Method id of a method without one) that give one of its attributes
// different values, which would fail the constructor with R4C-REG-008. An attribute one
// of them leaves out may be the other's default, and a directive with config= may have
// its values changed by that configuration: both are left to the constructor, which
// compares the whole configurations.
func (g *generator) checkShared(ifaces []*iface) {
	type key struct {
		layer policy.Layer
		id    string
	}
	first := map[key]*spec{}
	for _, it := range ifaces {
		for _, m := range it.methods {
			for _, s := range m.specs {
				if _, per := s.def.handlerParam(); s.def.layer == "" || per {
					continue // an order is no instance; a policy with a method value (a fallback) is built for each function
				}
				id := it.name + "." + m.name
				if n, ok := s.vals["name"]; ok {
					id, _ = strconv.Unquote(n)
				}
				k := key{s.def.layer, id}
				f, seen := first[k]
				if !seen {
					first[k] = s
					continue
				}
				if f == s || s.vals["config"] != "" || f.vals["config"] != "" {
					continue
				}
				for _, attr := range slices.Sorted(maps.Keys(s.vals)) {
					if v, ok := f.vals[attr]; ok && attr != "name" && v != s.vals[attr] {
						g.ds.add(s.d.pos, r4c.Conflict, "the %s %q is declared at %s:%d with %s %s, here with %s",
							s.def.layer, id, filepath.Base(f.d.pos.Filename), f.d.pos.Line, attr, v, s.vals[attr])
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
		g.ds.add(inFile[i].pos, CodeBadTarget, "%s: %s", d.spec.Name.Name, oneLine(inFile[i].msg))
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
	r := &resolver{pkg: g.pkg.Types, file: d.file, im: g.im(), ds: g.ds, refs: g.refs, refFiles: g.refFiles, fset: g.fset, load: g.load}
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
				where := "on " + d.spec.Name.Name + ", or on each method"
				if strings.EqualFold(e.name, noneDirective) {
					where = "on each method it should leave the interface's directives off"
				}
				g.ds.add(e.pos, CodeMalformed, "%s%s on an embedded interface: put it %s", prefix, e.name, where)
			}
		}
		for _, n := range f.Names {
			own[n.Name] = decl{doc: f.Doc, spec: &ast.TypeSpec{Name: n}, file: d.file}
		}
	}
	g.promoted(d, own, map[string]bool{d.spec.Name.Name: true})
	out := &iface{name: obj.Name(), pos: pos, constraint: joinConstraints(buildConstraint(d.file, g.fset.Position(d.file.Package).Filename))}
	used := map[*spec]bool{} // the interface's directives that some method takes
	before := len(g.ds.list)
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
				switch {
				case len(ds) > 1 || len(n.attrs) > 0:
					g.ds.add(n.pos, CodeMalformed, "%s: %s%s stands alone: it takes no attribute and no other directive", m.name, prefix, noneDirective)
				case len(top) == 0 || !guardable(m.sig):
					g.ds.add(n.pos, CodeMalformed, "%s: %s%s leaves nothing off: the interface's directives do not apply to it", m.name, prefix, noneDirective)
				}
				ds = nil
			}
			rr := r
			if od.file != d.file { // a method of an embedded interface, declared in another file
				rr = &resolver{pkg: r.pkg, file: od.file, im: r.im, ds: r.ds, refs: r.refs, refFiles: r.refFiles, fset: r.fset, load: r.load}
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
				used[s] = true
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
	for _, s := range top {
		if used[s] || len(g.ds.list) > before {
			continue // used, or unused for a reason already reported
		}
		if len(ifaceMethodsGuardable(it)) == 0 {
			g.ds.add(s.d.pos, CodeMalformed, "%s's directives apply to none of its methods: none takes a context.Context first and returns an error or a future",
				obj.Name())
			continue
		}
		g.ds.add(s.d.pos, CodeMalformed, "%s's %s directive applies to none of its methods: each one that could take it has its own, or %s%s",
			obj.Name(), s.d.name, prefix, noneDirective)
	}
	return out
}

// ifaceMethodsGuardable returns the methods of it that can be guarded.
func ifaceMethodsGuardable(it *types.Interface) []*types.Func {
	var out []*types.Func
	for i := range it.NumMethods() {
		if guardable(it.Method(i).Type().(*types.Signature)) {
			out = append(out, it.Method(i))
		}
	}
	return out
}
