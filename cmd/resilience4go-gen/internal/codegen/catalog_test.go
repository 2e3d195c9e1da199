package codegen

import (
	"go/types"
	"slices"
	"strings"
	"testing"

	"github.com/samber/lo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// The tests of the catalog (GN-2): its directives and attributes are the policies' own,
// checked against the tables the policies register and the option functions their
// packages declare, so that a new configuration attribute, a renamed option or a new
// layer breaks a test here rather than the generated code.

// policyDefs returns the catalog's directives of a policy, not order.
func policyDefs() []policyDef {
	return slices.DeleteFunc(slices.Clone(catalog), func(p policyDef) bool { return p.layer == "" })
}

// SPEC GN-2: a directive's configuration attributes, enabled included, are exactly the
// attributes of its policy's registered table; its other attributes (name, config, the
// error lists, method) are not configuration attributes.
func TestCatalog_ConfigAttributesAreThePolicysTable(t *testing.T) {
	for _, def := range policyDefs() {
		k, ok := contract.Lookup(def.layer)
		require.True(t, ok, "the layer %s of %s is registered", def.layer, def.name)
		var config, other []string
		for _, o := range def.allOptions() {
			if o.Config {
				config = append(config, o.Name)
			} else {
				other = append(other, o.Name)
			}
		}
		assert.ElementsMatch(t, k.Attributes(), config,
			"the configuration attributes of %s are those of the keys instances.<id>.%s.*", def.name, def.layer)
		assert.Contains(t, config, "enabled", def.name)
		for _, a := range other {
			assert.NotContains(t, k.Attributes(), a, "%s %s is not a configuration attribute", def.name, a)
		}
		names := slices.Concat(config, other)
		assert.Len(t, slices.Compact(slices.Sorted(slices.Values(names))), len(names), "%s names an attribute twice: %v", def.name, names)
	}
}

// SPEC GN-2: each configuration attribute is read as the kind of value its policy's table
// takes: a value of the catalog's kind passes the table's check, and a value of a
// neighbouring kind fails it with the runtime's code (so a float read as a whole number,
// or a duration as a number, is caught).
func TestCatalog_ValueKindsAreTheTables(t *testing.T) {
	samples := map[contract.ValueKind]struct {
		good     []string
		bad      string
		badCode  string
		kindName string
	}{
		contract.DurationValue: {[]string{"250ms", "1s"}, "250", r4c.BadDuration, "duration"},
		contract.IntValue:      {[]string{"3"}, "1.5", r4c.BadNumber, "whole number"},
		contract.FloatValue:    {[]string{"0.5", "3"}, "half", r4c.BadNumber, "number"},
		contract.BoolValue:     {[]string{"true", "false"}, "yes", r4c.BadBoolean, "boolean"},
		contract.EnumValue:     {nil, "no-such-value", "", "value of the enum"}, // good: the enum's spellings
		// The one text attribute of a table, rateLimiter.windows: a list of windows.
		contract.StringValue: {[]string{"10/1s", "10/1s, 1000/24h"}, "10 per second", r4c.BadNumber, "list of windows"},
	}
	for _, def := range policyDefs() {
		k, _ := contract.Lookup(def.layer)
		for _, o := range def.allOptions() {
			if !o.Config {
				continue
			}
			s, ok := samples[o.Value]
			require.True(t, ok, "a sample of %s %s's kind", def.name, o.Name)
			good := s.good
			if o.Value == contract.EnumValue {
				require.NotEmpty(t, o.Enum, "%s %s lists its values", def.name, o.Name)
				good = nil
				for _, e := range o.Enum {
					good = append(good, e.Spelling, strings.ToLower(e.Spelling), strings.ToUpper(e.Spelling))
				}
			}
			for _, v := range good {
				assert.NoError(t, k.Check(o.Name, v), "%s %s=%s: a %s", def.name, o.Name, v, s.kindName)
			}
			err := k.Check(o.Name, s.bad)
			require.Error(t, err, "%s %s=%s is not a %s", def.name, o.Name, s.bad, s.kindName)
			if s.badCode != "" {
				var ce *policy.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, s.badCode, ce.Code, "%s %s=%s", def.name, o.Name, s.bad)
			}
		}
	}
}

// SPEC GN-1, CO-1: every built-in layer has exactly one directive, found by its directive name
// and by its layer's spelling, and the specs are written in the default order of the
// layers.
func TestCatalog_EveryLayerHasADirective(t *testing.T) {
	layers := contract.Ranked()
	registered := make([]policy.Layer, 0, len(layers))
	for _, k := range contract.All() {
		registered = append(registered, k.Layer())
	}
	assert.ElementsMatch(t, layers, registered, "the registered kinds are the built-in layers")
	for _, l := range layers {
		var defs []string
		for _, p := range catalog {
			if p.layer == l {
				defs = append(defs, p.name)
			}
		}
		require.Len(t, defs, 1, "the directives of layer %s", l)
		for _, name := range []string{defs[0], string(l), strings.ToUpper(string(l))} {
			p, ok := lookupDirective(name)
			if assert.True(t, ok, "directive %q", name) {
				assert.Equal(t, l, p.layer, "directive %q", name)
			}
			got, ok := layerByName(name)
			assert.True(t, ok, "order layers=%s", name)
			assert.Equal(t, l, got, "order layers=%s", name)
		}
	}
	assert.Len(t, policyDefs(), len(layers), "one directive per layer, and no other")
	order, ok := lookupDirective("order")
	require.True(t, ok)
	if assert.Len(t, order.allOptions(), 1, "order has layers= only") {
		assert.Equal(t, "layers", order.allOptions()[0].Name)
	}
	assert.Equal(t, append(slices.Clone(layers), ""), layerOrder, "the specs are written in the default order, then the order")
	names := directiveNames()
	assert.Equal(t, []string{"order", noneDirective}, names[len(names)-2:], "then order, and none, which is no policy")
}

// loadCatalogPackages type-checks the packages the generated code calls: every policy
// package of the catalog, resilience and policy, from their export data.
func loadCatalogPackages(t *testing.T) map[string]*types.Package {
	t.Helper()
	paths := []string{module + "/resilience", module + "/policy", asyncPath}
	for _, def := range policyDefs() {
		paths = append(paths, def.pkgPath)
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, paths...)
	require.NoError(t, err)
	out := map[string]*types.Package{}
	for _, p := range pkgs {
		require.Empty(t, p.Errors, "loading %s", p.PkgPath)
		out[p.PkgPath] = p.Types
	}
	for _, p := range paths {
		require.Contains(t, out, p)
	}
	return out
}

// SPEC GN-2, GN-4: every function, type and constant that the generated code names exists,
// with the signature the generated code calls it with: each attribute's option function
// takes the attribute's kind of value (the error lists, ...error) and returns its
// package's Option; each policy's spec function of package resilience takes those
// Options; the window types, algorithms and layer constants exist.
func TestCatalog_OptionFunctionsExist(t *testing.T) {
	pkgs := loadCatalogPackages(t)
	errType := types.Universe.Lookup("error").Type()
	duration := types.Type(nil)
	for _, def := range policyDefs() {
		pkg := pkgs[def.pkgPath]
		assert.Equal(t, def.pkgName, pkg.Name(), "the package name of %s", def.pkgPath)
		optObj, _ := pkg.Scope().Lookup("Option").(*types.TypeName)
		require.NotNil(t, optObj, "%s.Option", def.pkgName)
		for _, o := range def.allOptions() {
			if o.Option == "" {
				if o.Name != lockedAttr { // locked gives the spec to resilience.Locked
					assert.Equal(t, contract.MethodValue, o.Value, "%s %s has no option function", def.name, o.Name)
				}
				continue
			}
			fn, _ := pkg.Scope().Lookup(o.Option).(*types.Func)
			if !assert.NotNil(t, fn, "%s.%s, the option of %s %s", def.pkgName, o.Option, def.name, o.Name) {
				continue
			}
			sig := fn.Type().(*types.Signature)
			what := def.pkgName + "." + o.Option + " " + sig.String()
			require.Equal(t, 1, sig.Results().Len(), what)
			assert.True(t, types.Identical(optObj.Type(), sig.Results().At(0).Type()), "%s returns %s.Option", what, def.pkgName)
			require.Equal(t, 1, sig.Params().Len(), what)
			param := sig.Params().At(0).Type()
			if o.Value == contract.ErrorsValue {
				require.True(t, sig.Variadic(), "%s takes ...error", what)
				assert.True(t, types.Identical(param.(*types.Slice).Elem(), errType), "%s takes ...error", what)
				continue
			}
			assert.False(t, sig.Variadic(), what)
			switch o.Value {
			case contract.DurationValue:
				named, ok := param.(*types.Named)
				if assert.True(t, ok, what) {
					assert.Equal(t, "time.Duration", named.Obj().Pkg().Path()+"."+named.Obj().Name(), what)
					duration = param
				}
			case contract.IntValue:
				assert.True(t, types.Identical(param, types.Typ[types.Int]), "%s takes an int", what)
			case contract.FloatValue:
				assert.True(t, types.Identical(param, types.Typ[types.Float64]), "%s takes a float64", what)
			case contract.BoolValue:
				assert.True(t, types.Identical(param, types.Typ[types.Bool]), "%s takes a bool", what)
			case contract.StringValue:
				assert.True(t, types.Identical(param, types.Typ[types.String]), "%s takes a string", what)
			case contract.EnumValue:
				assertConstants(t, pkg, param, what, lo.Map(o.Enum, func(e contract.Enum, _ int) string { return e.Const })...)
			default:
				t.Errorf("%s: %s %s has a kind without a check", what, def.name, o.Name)
			}
		}
	}

	// The spec functions of package resilience, as specExpr writes them.
	res := pkgs[module+"/resilience"]
	for _, def := range policyDefs() {
		opt := pkgs[def.pkgPath].Scope().Lookup("Option").Type()
		name := strings.ToUpper(string(def.layer[:1])) + string(def.layer[1:])
		fn, _ := res.Scope().Lookup(name).(*types.Func)
		if !assert.NotNil(t, fn, "resilience.%s", name) {
			continue
		}
		sig := fn.Type().(*types.Signature)
		require.True(t, sig.Variadic(), "resilience.%s takes options", name)
		last := sig.Params().At(sig.Params().Len() - 1).Type().(*types.Slice).Elem()
		assert.True(t, types.Identical(opt, last), "resilience.%s takes ...%s.Option, not %s", name, def.pkgName, last)
		_, handled := def.handlerParam()
		switch {
		case handled:
			assert.Equal(t, 2, sig.Params().Len(), "resilience.%s(fn, opts...)", name)
		case def.leads():
			require.Equal(t, 2, sig.Params().Len(), "resilience.%s(value, opts...)", name)
			lead, _ := lo.Find(def.options, func(o option) bool { return o.Leading })
			require.Equal(t, contract.DurationValue, lead.Value, "a leading value of another kind has no check here")
			assert.True(t, types.Identical(duration, sig.Params().At(0).Type()), "resilience.%s takes a time.Duration first", name)
		default:
			assert.Equal(t, 1, sig.Params().Len(), "resilience.%s(opts...)", name)
		}
	}
	for _, name := range []string{"Order", "Locked", "Wrap", "Wrap1", "Wrap2", "WrapAsync", "WrapAsync1"} {
		assert.IsType(t, &types.Func{}, res.Scope().Lookup(name), "resilience.%s", name)
	}
	assert.IsType(t, &types.TypeName{}, res.Scope().Lookup("Registry"), "resilience.Registry")

	pol := pkgs[module+"/policy"]
	assert.IsType(t, &types.TypeName{}, pol.Scope().Lookup("ConfigError"), "policy.ConfigError")
	layerType := pol.Scope().Lookup("Layer").Type()
	for _, def := range policyDefs() {
		p := pkgs[def.pkgPath]
		if !assert.NotNil(t, p, def.pkgPath) {
			continue
		}
		c, _ := p.Scope().Lookup("Layer").(*types.Const)
		if assert.NotNil(t, c, "%s.Layer", def.pkgName) {
			assert.True(t, types.Identical(layerType, c.Type()), "%s.Layer is a Layer", def.pkgName)
			assert.Equal(t, `"`+string(def.layer)+`"`, c.Val().ExactString(), "%s.Layer", def.pkgName)
		}
	}
	assert.IsType(t, &types.TypeName{}, pkgs[asyncPath].Scope().Lookup("Future"), "async.Future")
}

// assertConstants checks that pkg declares the constants names, of type param.
func assertConstants(t *testing.T, pkg *types.Package, param types.Type, what string, names ...string) {
	t.Helper()
	for _, n := range names {
		c, _ := pkg.Scope().Lookup(n).(*types.Const)
		if assert.NotNil(t, c, "%s.%s, a value of %s", pkg.Name(), n, what) {
			assert.True(t, types.AssignableTo(c.Type(), param), "%s.%s is a value of %s", pkg.Name(), n, what)
		}
	}
}

type genToySettings struct {
	Size     int
	Disabled bool
	contract.Common
}

// SPEC GN-2: the catalog is made from the registered descriptors alone: a policy
// registered with a rank has a directive, named after its layer in lower case, whose
// attributes are its table's (enabled with the common ones), then those only code gives;
// its package is that of its settings.
func TestCatalog_MadeFromDescriptors(t *testing.T) {
	defer contract.Register(&contract.Descriptor[genToySettings]{
		L: "genToy",
		Attrs: []contract.Attr[genToySettings]{
			contract.IntAttr("size", func(s *genToySettings) *int { return &s.Size }),
			contract.EnabledAttr(func(s *genToySettings) *bool { return &s.Disabled }),
		},
		Defaults:  func() genToySettings { return genToySettings{} },
		Compose:   contract.Composition{Rank: 1_000_000, AsyncOnly: "R4C-TOY-001"},
		CodeAttrs: []contract.Param{{Name: "dropOn", Option: "DropOn", Value: contract.ErrorsValue}},
	})()
	defs := makeCatalog([]policy.Layer{"genToy", "notRegistered"})
	require.Len(t, defs, 2, "the registered layer, then order")
	d := defs[0]
	assert.Equal(t, "gentoy", d.name)
	assert.Equal(t, policy.Layer("genToy"), d.layer)
	assert.Equal(t, module+"/cmd/resilience4go-gen/internal/codegen", d.pkgPath)
	assert.Equal(t, "codegen", d.pkgName)
	assert.Equal(t, "R4C-TOY-001", d.comp.AsyncOnly)
	assert.Equal(t, []string{"size", "dropOn", "name", "config", "enabled", "locked"},
		lo.Map(d.allOptions(), func(o option, _ int) string { return o.Name }))
	size, _ := d.option("size")
	assert.Equal(t, option{Name: "size", Option: "Size", Value: contract.IntValue, Config: true}, size)
	drop, _ := d.option("dropOn")
	assert.False(t, drop.Config, "dropOn is no configuration attribute")
	assert.Equal(t, "order", defs[1].name)
}
