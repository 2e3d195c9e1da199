package codegen

import (
	"fmt"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/suggest"
)

// asyncPath is the import path of the futures package.
const asyncPath = module + "/async"

// specs checks each directive of one interface or method; a policy given twice is
// reported on its second directive.
func (g *generator) specs(r *resolver, ds []*directive) []*spec {
	var out []*spec
	for _, d := range ds {
		sp := r.resolve(d)
		if sp.def == nil {
			continue
		}
		if prev, dup := lo.Find(out, func(o *spec) bool { return o.def == sp.def }); dup {
			g.ds.add(d.pos, CodeMalformed, "%s is given twice, here and at line %d", d.name, prev.d.pos.Line)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// checkMethod finds m's shape and checks that its directives fit it: a context first,
// an error or a future last, a layer that guards futures only (a hedge) only on a future,
// not beside the layer it replaces, a method value (a fallback's) of the right type. at
// is where to report a method that does not fit: its first directive, or the method when
// all its directives are the interface's.
func (g *generator) checkMethod(r *resolver, it *types.Interface, m *method, at token.Position) {
	params, results := m.sig.Params(), m.sig.Results()
	if params.Len() == 0 || !isContext(params.At(0).Type()) {
		g.ds.add(at, CodeMethodShape, "%s: a method with %s directives takes a context.Context first", m.name, prefix)
		return
	}
	switch {
	case results.Len() == 1 && isError(results.At(0).Type()):
		m.shape = errOnly
	case results.Len() == 2 && isError(results.At(1).Type()):
		m.shape, m.result = valueErr, results.At(0).Type()
	case results.Len() == 1 && futureOf(results.At(0).Type()) != nil:
		m.shape, m.result = future, futureOf(results.At(0).Type())
	default:
		g.ds.add(at, CodeMethodShape, "%s: a method with %s directives returns error last: error, (T, error), or *async.Future[T]", m.name, prefix)
		return
	}
	for _, s := range m.specs {
		if code := s.def.comp.AsyncOnly; code != "" && m.shape != future {
			g.ds.add(s.d.pos, code, "%s: a %s guards a method that returns *async.Future[T]; %s returns %s",
				m.name, s.def.layer, m.name, strings.TrimSuffix(strings.TrimPrefix(types.TypeString(results, byName(r.pkg)), "("), ")"))
		}
	}
	for _, s := range m.specs {
		role := s.def.comp.Role
		other, ok := lo.Find(m.specs, func(o *spec) bool {
			return role.Name != "" && role.Code != "" && o.def.layer != s.def.layer && o.def.comp.Role.Name == role.Name
		})
		if !ok {
			continue
		}
		later := s
		if other.d.pos.Offset > s.d.pos.Offset || other.d.pos.Filename != s.d.pos.Filename {
			later = other
		}
		g.ds.add(later.d.pos, role.Code, "%s: a %s and a %s in one composition: the %s takes the %s's place",
			m.name, s.def.layer, other.def.layer, s.def.layer, other.def.layer)
	}
	if h, ok := lo.Find(m.specs, func(s *spec) bool { return s.handler.key != "" }); ok {
		g.checkHandler(r, it, m, h)
	}
}

// guardable reports whether a method of signature sig can be guarded: a context first,
// and an error, (T, error) or a future returned.
func guardable(sig *types.Signature) bool {
	p, r := sig.Params(), sig.Results()
	if p.Len() == 0 || !isContext(p.At(0).Type()) {
		return false
	}
	switch r.Len() {
	case 1:
		return isError(r.At(0).Type()) || futureOf(r.At(0).Type()) != nil
	case 2:
		return isError(r.At(1).Type())
	}
	return false
}

// handlerRef is a method value (a fallback's method=) checked against one method.
type handlerRef struct {
	name   string // the method's or the function's name
	method bool   // a method of the interface, called on the implementation
}

// checkHandler finds the method value of h (a fallback's method=) for m: a method of the
// interface, else a function of the package, of type func(context.Context, error) (T,
// error), or func(context.Context, error) error for a method that returns an error only.
func (g *generator) checkHandler(r *resolver, it *types.Interface, m *method, h *spec) {
	name := h.handler.value
	var sig *types.Signature
	ref := handlerRef{name: name}
	if fn, ok := g.methodsOf(it)[name]; ok {
		sig, ref.method = fn.Type().(*types.Signature), true
	}
	if sig == nil {
		if fn, ok := r.pkg.Scope().Lookup(name).(*types.Func); ok {
			sig = fn.Type().(*types.Signature)
			r.refer(fn)
		}
	}
	if sig == nil {
		msg := fmt.Sprintf("%s: %s %s %q is neither a method of the interface nor a function of package %s", m.name, h.def.name, h.handler.key, name, r.pkg.Name())
		if near := g.nearHandler(r, it, name); near != "" {
			msg += "; did you mean " + near + "?"
		}
		g.ds.add(h.handler.valuePos, CodeNoFallback, "%s", msg)
		return
	}
	want := "func(context.Context, error) (" + types.TypeString(m.result, byName(r.pkg)) + ", error)"
	if m.shape == errOnly {
		want = "func(context.Context, error) error"
	}
	if !handlerFits(sig, m) {
		g.ds.add(h.handler.valuePos, CodeFallbackType, "%s: %s %s is %s; for %s it must be %s",
			m.name, h.def.name, name, types.TypeString(sig, byName(r.pkg)), m.name, want)
		return
	}
	m.handler = ref
}

// methodsOf returns the methods of it by name, indexed once per interface.
func (g *generator) methodsOf(it *types.Interface) map[string]*types.Func {
	if m, ok := g.methods[it]; ok {
		return m
	}
	m := make(map[string]*types.Func, it.NumMethods())
	for i := range it.NumMethods() {
		m[it.Method(i).Name()] = it.Method(i)
	}
	if g.methods == nil {
		g.methods = map[*types.Interface]map[string]*types.Func{}
	}
	g.methods[it] = m
	return m
}

// nearHandler returns the method of it or function of the package nearest to name, found
// once per interface and name: an interface's directive with a misspelt method value is
// reported for each of its methods.
func (g *generator) nearHandler(r *resolver, it *types.Interface, name string) string {
	type key struct {
		it   *types.Interface
		name string
	}
	if g.nearHandlers == nil {
		g.nearHandlers = map[any]string{}
	}
	k := key{it, name}
	if near, ok := g.nearHandlers[k]; ok {
		return near
	}
	candidates := slices.Sorted(maps.Keys(g.methodsOf(it)))
	candidates = append(candidates, lo.Filter(r.pkg.Scope().Names(), func(n string, _ int) bool {
		_, ok := r.pkg.Scope().Lookup(n).(*types.Func)
		return ok
	})...)
	near := suggest.Closest(name, candidates, maxSuggestDistance)
	g.nearHandlers[k] = near
	return near
}

// handlerFits reports whether sig is a method value (a fallback) for m.
func handlerFits(sig *types.Signature, m *method) bool {
	p, res := sig.Params(), sig.Results()
	if sig.TypeParams().Len() > 0 || sig.Variadic() || p.Len() != 2 || !isContext(p.At(0).Type()) || !isError(p.At(1).Type()) {
		return false
	}
	if m.shape == errOnly {
		return res.Len() == 1 && isError(res.At(0).Type())
	}
	return res.Len() == 2 && types.Identical(res.At(0).Type(), m.result) && isError(res.At(1).Type())
}

// byName is a types.Qualifier for messages: other packages by their names, this one not
// at all.
func byName(self *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == self {
			return ""
		}
		return p.Name()
	}
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func isError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }

// futureOf returns T if t is *async.Future[T], else nil.
func futureOf(t types.Type) types.Type {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return nil
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != asyncPath || n.Obj().Name() != "Future" || n.TypeArgs().Len() != 1 {
		return nil
	}
	return n.TypeArgs().At(0)
}

// lower returns s with its leading capitals in lower case, as Go spells an unexported
// name: "Price" is "price", "APIClient" is "apiClient", "API" is "api".
func lower(s string) string {
	runes := []rune(s)
	n := 0
	for n < len(runes) && unicode.IsUpper(runes[n]) {
		n++
	}
	if n > 1 && n < len(runes) && unicode.IsLower(runes[n]) {
		n-- // the last capital starts the next word
	}
	for i := range max(n, 1) {
		if i < len(runes) {
			runes[i] = unicode.ToLower(runes[i])
		}
	}
	return string(runes)
}

// upper returns s with its first letter in upper case.
func upper(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
