package codegen

import (
	"path"
	"strconv"
	"strings"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"

	// Package resilience imports, and so registers, the built-in policies, whose
	// descriptors the catalog is made of.
	_ "github.com/resilience4go/resilience4go/resilience"
)

// option is one attribute of a directive as its policy's descriptor gives it: the option
// function it becomes, how its value is read and written, and whether it is a
// configuration attribute.
type option = contract.Param

// policyDef is one directive: the policy it declares and how its attributes become
// options in the generated code.
type policyDef struct {
	name    string       // the directive's name, e.g. "ratelimiter": the layer in lower case
	layer   policy.Layer // "" for order
	pkgPath string       // the import path of the policy's package
	pkgName string       // its package name
	options []option
	comp    contract.Composition // how the policy composes: its place, the calls it guards, what it replaces
}

const module = "github.com/resilience4go/resilience4go"

// common is what every policy directive has: a shared name, a configuration to use,
// whether the policy is enabled, and whether the values the directive sets are locked
// against the configuration keys (locked=true: the spec is given to resilience.Locked;
// no option takes it).
var common = []option{
	{Name: "name", Option: "Name", Value: contract.StringValue},
	{Name: "config", Option: "UseConfig", Value: contract.StringValue},
	{Name: "enabled", Option: "Enabled", Value: contract.BoolValue, Config: true},
	{Name: lockedAttr, Value: contract.BoolValue},
}

// lockedAttr is the common attribute that locks a directive's values.
const lockedAttr = "locked"

// orderDef is the directive that names the order of the layers.
var orderDef = policyDef{name: "order", options: []option{{Name: "layers", Value: contract.LayersValue}}}

// catalog is every directive: one per layer of the default order, in that order, made
// from its policy's registered descriptor (its configuration attributes, then those only
// code gives, then the common ones), then order.
var catalog = makeCatalog(contract.Ranked())

// makeCatalog returns the directives of the registered layers, in the order given, then
// order.
func makeCatalog(layers []policy.Layer) []policyDef {
	out := make([]policyDef, 0, len(layers)+1)
	for _, l := range layers {
		k, ok := contract.Lookup(l)
		if !ok {
			continue
		}
		own := lo.Filter(k.Params(), func(p contract.Param, _ int) bool {
			return !lo.ContainsBy(common, func(c option) bool { return c.Name == p.Name }) // enabled goes with the common ones
		})
		out = append(out, policyDef{
			name:    strings.ToLower(string(l)),
			layer:   l,
			pkgPath: k.Package(),
			pkgName: path.Base(k.Package()),
			options: own,
			comp:    k.Composition(),
		})
	}
	return append(out, orderDef)
}

// noneDirective, on a method, leaves the interface's directives off it.
const noneDirective = "none"

// lookupDirective returns the directive named name, in any case: "ratelimiter" and
// "rateLimiter" (the configuration segment) are one directive.
func lookupDirective(name string) (*policyDef, bool) {
	for i := range catalog {
		if strings.EqualFold(catalog[i].name, name) {
			return &catalog[i], true
		}
	}
	return nil, false
}

// directiveNames returns the names of every directive, in catalog order.
func directiveNames() []string {
	return append(lo.Map(catalog, func(p policyDef, _ int) string { return p.name }), noneDirective)
}

// allOptions returns the directive's attributes: its own, then the common ones (which
// order has none of).
func (p *policyDef) allOptions() []option {
	if p.layer == "" {
		return p.options
	}
	return append(append([]option(nil), p.options...), common...)
}

// option returns the directive's attribute named attr.
func (p *policyDef) option(attr string) (option, bool) {
	return lo.Find(p.allOptions(), func(o option) bool { return o.Name == attr })
}

// handlerParam returns the directive's attribute whose value is a function or method
// resolved for each method (contract.MethodValue), if it has one.
func (p *policyDef) handlerParam() (option, bool) {
	return lo.Find(p.options, func(o option) bool { return o.Value == contract.MethodValue })
}

// leads reports whether the directive has an attribute whose value leads the arguments
// of its spec function (contract.Param.Leading).
func (p *policyDef) leads() bool {
	return lo.ContainsBy(p.options, func(o option) bool { return o.Leading })
}

// assumed returns the values the range check assumes for the attributes the policy has
// no default for, when a directive leaves them to the configuration.
func (p *policyDef) assumed() map[string]string {
	out := map[string]string{}
	for _, o := range p.options {
		if o.Assume != "" {
			out[o.Name] = o.Assume
		}
	}
	return out
}

// layerByName returns the layer named name in an order: a layer's name (e.g.
// "circuitBreaker") or its directive's, in any case.
func layerByName(name string) (policy.Layer, bool) {
	for _, p := range catalog {
		if p.layer != "" && (strings.EqualFold(string(p.layer), name) || strings.EqualFold(p.name, name)) {
			return p.layer, true
		}
	}
	return "", false
}

// layerRef returns the Go expression of layer l's constant in the generated code, e.g.
// timeout.Layer, importing its policy's package with im.
func layerRef(im *imports, l policy.Layer) string {
	for _, p := range catalog {
		if p.layer == l {
			return im.use(p.pkgPath, p.pkgName) + ".Layer"
		}
	}
	return strconv.Quote(string(l))
}

// defOf returns the directive of layer l.
func defOf(l policy.Layer) (*policyDef, bool) {
	for i := range catalog {
		if catalog[i].layer == l && l != "" {
			return &catalog[i], true
		}
	}
	return nil, false
}
