package codegen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/suggest"
	"github.com/resilience4go/resilience4go/policy"
)

// maxSuggestDistance is the largest edit distance at which a name is suggested.
const maxSuggestDistance = 4

// spec is a directive checked: its policy and the options it becomes, as Go expressions.
type spec struct {
	def     *policyDef
	d       *directive
	opts    []string          // the option calls, e.g. ratelimit.Permits(10), in the order written
	lead    string            // the value that leads the spec function's arguments (a timeout's duration, e.g. 2 * time.Second), or ""
	locked  bool              // locked=true: the spec is given to resilience.Locked
	handler attribute         // the attribute whose value is a function or method (a fallback's method=), resolved for each method
	vals    map[string]string // each attribute's value as written in Go, for comparing shared instances
	order   []policy.Layer    // an order's layers, outermost first
	ok      bool              // no error was found in it
}

// resolver checks directives and writes their options, for one package.
type resolver struct {
	pkg      *types.Package
	file     *ast.File // the file of the directives being checked, for the errors they name
	im       *imports
	ds       *diags
	refs     map[string]bool // the package-level names the generated code refers to
	refFiles map[string]bool // the files that declare them
	fset     *token.FileSet
	// load returns the package at an import path, or nil if there is none.
	load func(path string) *types.Package
	// errorVars memoizes the candidates of nearError, by scope.
	errorVars map[any][]string
}

// resolve checks d and returns its spec. Errors are reported to r.ds, and the spec is
// then not ok.
func (r *resolver) resolve(d *directive) *spec {
	def, ok := lookupDirective(d.name)
	if !ok {
		msg := fmt.Sprintf("unknown directive %s%s", prefix, d.name)
		if near := suggest.Closest(d.name, directiveNames(), maxSuggestDistance); near != "" {
			msg += "; did you mean " + prefix + near + "?"
		} else {
			msg += "; the directives are " + strings.Join(directiveNames(), ", ")
		}
		r.ds.add(d.pos, CodeUnknownDirective, "%s", msg)
		return &spec{d: d}
	}
	sp := &spec{def: def, d: d, ok: true, vals: map[string]string{}}
	before := len(r.ds.list)
	values := map[string]string{} // configuration attributes, for the range check
	valuePos := map[string]attribute{}
	for _, a := range d.attrs {
		o, ok := def.option(a.key)
		if !ok {
			names := lo.Map(def.allOptions(), func(o option, _ int) string { return o.Name })
			msg := fmt.Sprintf("%s has no attribute %q", def.name, a.key)
			if near := suggest.Closest(a.key, names, maxSuggestDistance); near != "" {
				msg += "; did you mean " + near + "?"
			} else {
				msg += "; its attributes are " + strings.Join(names, ", ")
			}
			r.ds.add(a.pos, CodeUnknownAttribute, "%s", msg)
			continue
		}
		if o.Config {
			k, _ := contract.Lookup(def.layer)
			if err := k.Check(a.key, a.value); err != nil {
				r.configError(a, err)
				continue
			}
			values[a.key] = a.value
			valuePos[a.key] = a
		}
		expr := r.value(def, o, a)
		if expr != "" {
			sp.vals[o.Name] = expr
		}
		switch {
		case expr == "":
		case o.Name == lockedAttr && def.layer != "":
			sp.locked = expr == "true"
		case o.Leading:
			sp.lead = expr
		case def.layer == "":
			sp.opts = append(sp.opts, expr)
		default:
			sp.opts = append(sp.opts, r.im.use(def.pkgPath, def.pkgName)+"."+o.Option+"("+expr+")")
		}
	}
	if def.layer != "" && len(values) > 0 {
		r.checkRanges(d, def, values, valuePos)
	}
	if h, has := def.handlerParam(); has {
		sp.handler, ok = d.attr(h.Name)
		if !ok {
			r.ds.add(d.pos, CodeNoFallback, "%s needs %s=<name>: a method of the interface or a function of the package, func(context.Context, error) (T, error)", def.name, h.Name)
		}
	}
	if def.layer == "" {
		a, ok := d.attr("layers")
		if !ok {
			r.ds.add(d.pos, CodeMalformed, "order needs layers=<layer>,<layer>,…, outermost first")
		}
		for _, name := range strings.Split(a.value, ",") {
			if l, ok := layerByName(strings.TrimSpace(name)); ok {
				sp.order = append(sp.order, l)
			}
		}
	}
	sp.ok = len(r.ds.list) == before
	return sp
}

// checkRanges checks the ranges of the configuration attributes a directive gives, as the
// policy checks a configuration, and reports each value out of range. The values are
// checked together, again without each one found wrong, then each alone over the
// defaults, so that one error does not hide another; a default that does not fit the
// values given (a maxLimit under the default initialLimit) is reported at the directive.
// A directive with config= leaves ranges to the constructor: the configuration may give
// the attributes the values need. For the attributes a policy has no default for, the
// check assumes the values its descriptor gives (contract.Param.Assume) when a directive
// leaves them to the configuration: the least demanding valid ones, so that every error
// found is about the directive's own values. The work is the number of values times one
// check.
func (r *resolver) checkRanges(d *directive, def *policyDef, values map[string]string, at map[string]attribute) {
	if _, ok := d.attr("config"); ok {
		return
	}
	k, _ := contract.Lookup(def.layer)
	fillers := def.assumed()
	with := func(given map[string]string) map[string]string {
		vals := map[string]string{}
		for a, v := range fillers {
			vals[a] = v
		}
		for a, v := range given {
			vals[a] = v
		}
		return vals
	}
	reported := map[string]bool{}
	vals := with(values)
	for range values {
		attr, err := k.RangeError(vals)
		if err == nil || reported[attr] {
			break // valid, or wrong again for want of the value reported: nothing new
		}
		if _, given := values[attr]; !given {
			// A default that does not fit the values given: not one the directive wrote
			// (badly, or already reported), nor one the check assumed for want of a default.
			_, written := d.attr(attr)
			_, assumed := fillers[attr]
			if !written && !assumed && !reported[attr] {
				r.configError(attribute{valuePos: d.pos}, fmt.Errorf("%w (the default %s does not fit this directive's values: set it)", err, attr))
			}
			break
		}
		r.configError(at[attr], err)
		reported[attr] = true
		delete(vals, attr)
		if f, ok := fillers[attr]; ok {
			vals[attr] = f
		}
	}
	for _, attr := range slices.Sorted(maps.Keys(values)) {
		if reported[attr] {
			continue
		}
		if bad, err := k.RangeError(with(map[string]string{attr: values[attr]})); err != nil && bad == attr {
			r.configError(at[attr], err)
		}
	}
}

// refer records that the generated code refers to obj, a package-level name of this
// package: its name, and its file, whose build constraint the generated file takes.
func (r *resolver) refer(obj types.Object) {
	r.refs[obj.Name()] = true
	r.refFiles[r.fset.Position(obj.Pos()).Filename] = true
}

// configError reports err, the policy's own error for attribute a, with its code.
func (r *resolver) configError(a attribute, err error) {
	var ce *policy.ConfigError
	if errors.As(err, &ce) {
		r.ds.add(a.valuePos, ce.Code, "%s", strings.Replace(err.Error(), ce.Code+": ", "", 1))
		return
	}
	r.ds.add(a.valuePos, CodeMalformed, "%v", err)
}

// value returns the Go expression of attribute a, o of directive def, which the
// policy's own table has accepted if it is a configuration attribute; "" after reporting
// an error, and for a function or method, which is resolved for each method.
func (r *resolver) value(def *policyDef, o option, a attribute) string {
	v := strings.TrimSpace(a.value)
	switch o.Value {
	case contract.DurationValue:
		d, err := policy.ParseDuration(v)
		if err != nil {
			r.configError(a, err)
			return ""
		}
		return r.duration(d)
	case contract.IntValue:
		n, _ := strconv.Atoi(v)
		if n > math.MaxInt32 || n < math.MinInt32 {
			r.ds.add(a.valuePos, r4c.OutOfRange, "%s = %q: out of range: a whole number of a directive is between %d and %d, so that the generated code compiles where int has 32 bits",
				a.key, a.value, math.MinInt32, math.MaxInt32)
			return ""
		}
		return strconv.Itoa(n)
	case contract.FloatValue:
		f, _ := strconv.ParseFloat(v, 64)
		return strconv.FormatFloat(f, 'g', -1, 64)
	case contract.BoolValue:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") { // a configuration attribute's table accepted it
			r.ds.add(a.valuePos, r4c.BadBoolean, "%s.%s = %q: not a boolean: use \"true\" or \"false\"", def.layer, a.key, a.value)
			return ""
		}
		return strconv.FormatBool(strings.EqualFold(v, "true"))
	case contract.StringValue:
		return strconv.Quote(a.value)
	case contract.EnumValue:
		// The table has accepted v, spelt in any case, as the policy reads it.
		if e, ok := lo.Find(o.Enum, func(e contract.Enum) bool { return strings.EqualFold(e.Spelling, v) }); ok {
			return r.im.use(def.pkgPath, def.pkgName) + "." + e.Const
		}
		r.ds.add(a.valuePos, CodeMalformed, "%s = %q: not one of the values the generator knows", a.key, a.value)
		return ""
	case contract.ErrorsValue:
		return r.errorList(a)
	case contract.LayersValue:
		return r.layers(a)
	}
	return ""
}

// duration writes d as a constant expression in its largest whole unit, e.g.
// 1500 * time.Millisecond.
func (r *resolver) duration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
		{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}, {time.Nanosecond, "Nanosecond"}}
	for _, u := range units {
		if d%u.d != 0 {
			continue
		}
		unit := r.im.use("time", "time") + "." + u.name
		if n := d / u.d; n != 1 {
			return strconv.FormatInt(int64(n), 10) + " * " + unit
		}
		return unit
	}
	return "" // not reached: every duration is a whole number of nanoseconds
}

// errorList returns the error variables of a, e.g. "ErrNotFound, io.EOF", each a
// package-level variable of a type that implements error: in this package, in one the
// directive's file imports (named by the name it is imported with), or in the package of
// an import path (net/http.ErrServerClosed), which the file need not import.
func (r *resolver) errorList(a attribute) string {
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	var out []string
	bad := false
	off := 0 // the byte offset of the entry in the value
	for _, entry := range strings.Split(a.value, ",") {
		name := strings.TrimSpace(entry)
		at := a.valuePos
		if !a.quoted {
			at.Column += off + strings.Index(entry, name)
			at.Offset += off + strings.Index(entry, name)
		}
		off += len(entry) + 1
		if name == "" {
			r.ds.add(at, CodeUnknownError, "%s: an empty name in the list (a list has no spaces after its commas, or is quoted)", a.key)
			bad = true
			continue
		}
		// pkg.Name, where pkg is a package the file imports (under that name) or a
		// package's import path, e.g. io.EOF or net/http.ErrServerClosed.
		qual, ident := "", name
		dot := strings.LastIndexByte(name, '.')
		qualified := dot >= 0
		if qualified {
			qual, ident = name[:dot], name[dot+1:]
		}
		scope, path, pkgName := r.pkg.Scope(), "", ""
		if qualified {
			var p *types.Package
			if path, pkgName = r.importOf(qual); path != "" {
				p = lo.FindOrElse(r.pkg.Imports(), nil, func(p *types.Package) bool { return p.Path() == path })
			} else if p = r.load(qual); p != nil {
				path, pkgName = p.Path(), p.Name()
			}
			if p == nil {
				r.ds.add(at, CodeUnknownError, "%s: %q is neither a package the file imports nor the path of a package this one may import", a.key, qual)
				bad = true
				continue
			}
			scope = p.Scope()
		}
		obj := scope.Lookup(ident)
		v, isVar := obj.(*types.Var)
		if ident == "" || !isVar || (qualified && !obj.Exported()) || !types.Implements(v.Type(), errType) {
			what := "is not declared"
			if obj != nil {
				what = "is not a variable of a type that implements error"
			}
			msg := fmt.Sprintf("%s: %s %s", a.key, name, what)
			if near := r.nearError(scope, errType, qualified, ident); near != "" && obj == nil {
				if qualified {
					near = qual + "." + near
				}
				msg += "; did you mean " + near + "?"
			}
			r.ds.add(at, CodeUnknownError, "%s", msg)
			bad = true
			continue
		}
		if qualified {
			out = append(out, r.im.use(path, pkgName)+"."+ident)
		} else {
			out = append(out, ident)
			r.refer(obj)
		}
	}
	if bad {
		return ""
	}
	return strings.Join(out, ", ")
}

// nearError returns the error variable of scope nearest to ident, exported ones only if
// exported is set; the candidates are listed once per scope.
func (r *resolver) nearError(scope *types.Scope, errType *types.Interface, exported bool, ident string) string {
	type key struct {
		scope    *types.Scope
		exported bool
	}
	if r.errorVars == nil {
		r.errorVars = map[any][]string{}
	}
	k := key{scope, exported}
	vars, ok := r.errorVars[k]
	if !ok {
		vars = errorVars(scope, errType, exported)
		r.errorVars[k] = vars
	}
	return suggest.Closest(ident, vars, maxSuggestDistance)
}

// errorVars returns the names of the error variables of scope, exported ones only if
// exported is set.
func errorVars(scope *types.Scope, errType *types.Interface, exported bool) []string {
	return lo.Filter(scope.Names(), func(n string, _ int) bool {
		v, ok := scope.Lookup(n).(*types.Var)
		return ok && (!exported || v.Exported()) && types.Implements(v.Type(), errType)
	})
}

// importOf returns the path and package name of the import that the directive's file
// names qual, or "" if none does.
func (r *resolver) importOf(qual string) (path, name string) {
	if r.file == nil {
		return "", ""
	}
	for _, is := range r.file.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			continue
		}
		pkg := lo.FindOrElse(r.pkg.Imports(), nil, func(tp *types.Package) bool { return tp.Path() == p })
		if pkg == nil {
			continue
		}
		n := pkg.Name()
		if is.Name != nil {
			n = is.Name.Name
		}
		if n == qual {
			return p, pkg.Name()
		}
	}
	return "", ""
}

// layers returns the layers of an order, e.g. "timeout.Layer, retry.Layer":
// each a layer's name or its directive's, once; an unknown or repeated one is
// R4C-REG-011, as at run time.
func (r *resolver) layers(a attribute) string {
	seen := map[policy.Layer]bool{}
	var out []string
	for _, name := range strings.Split(a.value, ",") {
		name = strings.TrimSpace(name)
		l, ok := layerByName(name)
		switch {
		case name == "":
			r.ds.add(a.valuePos, r4c.BadOrder, "order: an empty layer name (a list has no spaces after its commas, or is quoted)")
			return ""
		case !ok:
			names := lo.FilterMap(catalog, func(p policyDef, _ int) (string, bool) { return string(p.layer), p.layer != "" })
			msg := fmt.Sprintf("order: %q is not a layer", name)
			if near := suggest.Closest(name, names, maxSuggestDistance); near != "" && name != "" {
				msg += "; did you mean " + near + "?"
			} else {
				msg += "; the layers are " + strings.Join(names, ", ")
			}
			r.ds.add(a.valuePos, r4c.BadOrder, "%s", msg)
			return ""
		case seen[l]:
			r.ds.add(a.valuePos, r4c.BadOrder, "order: the layer %s is named twice", l)
			return ""
		}
		seen[l] = true
		out = append(out, layerRef(r.im, l))
	}
	return strings.Join(out, ", ")
}
