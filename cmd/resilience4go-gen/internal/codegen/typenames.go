package codegen

import (
	"go/types"
	"iter"
)

// typeProblem returns what the generated file cannot write of t: a type that does not
// resolve, an unexported type of another package, or a type of an internal package this
// one may not import; "" when it can write all of t.
func (g *generator) typeProblem(t types.Type) string {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.Invalid {
			return "a type that does not resolve"
		}
	case *types.Alias: // the generated code writes the alias's name, not what it stands for
		return g.namedProblem(t.Obj(), t.TypeArgs())
	case *types.Named:
		return g.namedProblem(t.Obj(), t.TypeArgs())
	case *types.Pointer, *types.Slice, *types.Array, *types.Chan:
		return g.typeProblem(t.(interface{ Elem() types.Type }).Elem())
	case *types.Map:
		if p := g.typeProblem(t.Key()); p != "" {
			return p
		}
		return g.typeProblem(t.Elem())
	case *types.Tuple:
		for v := range t.Variables() {
			if p := g.typeProblem(v.Type()); p != "" {
				return p
			}
		}
	case *types.Signature:
		if p := g.typeProblem(t.Params()); p != "" {
			return p
		}
		return g.typeProblem(t.Results())
	case *types.Struct:
		return membersProblem(g, "a struct with the unexported field", t.Fields())
	case *types.Interface:
		return membersProblem(g, "an interface with the unexported method", t.Methods())
	}
	return ""
}

// namedProblem is typeProblem for a named type or an alias: its name obj, then its type
// arguments args.
func (g *generator) namedProblem(obj *types.TypeName, args *types.TypeList) string {
	if p := obj.Pkg(); p != nil && p != g.pkg.Types {
		if !obj.Exported() {
			return "the unexported type " + p.Name() + "." + obj.Name()
		}
		if !internalAllowed(p.Path(), g.pkg.PkgPath) {
			return "a type of the internal package " + p.Path()
		}
	}
	for a := range args.Types() {
		if p := g.typeProblem(a); p != "" {
			return p
		}
	}
	return ""
}

// membersProblem is typeProblem for the fields of a struct or the methods of an
// interface, each a member that what names ("a struct with the unexported field"): an
// unexported member of another package cannot be written.
func membersProblem[M types.Object](g *generator, what string, members iter.Seq[M]) string {
	for m := range members {
		if !m.Exported() && m.Pkg() != g.pkg.Types {
			return what + " " + m.Name() + " of package " + m.Pkg().Name()
		}
		if p := g.typeProblem(m.Type()); p != "" {
			return p
		}
	}
	return ""
}
