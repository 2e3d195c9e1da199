package codegen

import (
	"go/types"
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
		if p := g.objProblem(t.Obj()); p != "" {
			return p
		}
		for i := range t.TypeArgs().Len() {
			if p := g.typeProblem(t.TypeArgs().At(i)); p != "" {
				return p
			}
		}
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
	if !internalAllowed(p.Path(), g.pkg.PkgPath) {
		return "a type of the internal package " + p.Path()
	}
	return ""
}
