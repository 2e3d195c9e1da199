package contract

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/policy"
)

// Instance is a policy instance as a registry holds it. Its kind tells its id (Kind.IDOf):
// the descriptor's ID, else the instance's own InstanceID() string method.
type Instance = any

// Kind is a policy type as a registry sees it, whatever the type of its settings.
type Kind interface {
	// Layer is the policy's layer, which is also the segment of its configuration keys.
	Layer() policy.Layer
	// Attributes returns the names of its configuration attributes.
	Attributes() []string
	// Check reports whether value is valid syntax for attribute attr.
	Check(attr, value string) error
	// CheckRange checks the ranges of the settings that values (attribute → value, each
	// of valid syntax) give over the built-in defaults, as building an instance does. It
	// returns the first error found, with the attribute it is about, when that attribute
	// is one of values'; nil when the settings are valid or the first error is about an
	// attribute that values leave unset (which the other sources of a configuration may
	// set).
	CheckRange(values map[string]string) (attr string, err error)
	// RangeError is CheckRange that also returns an error about an attribute values leave
	// unset, with that attribute: the built-in default of one attribute may not fit the
	// values given for others.
	RangeError(values map[string]string) (attr string, err error)
	// IDOf returns the id of an instance, which names it in events, errors and handles;
	// false when the kind cannot tell it.
	IDOf(p Instance) (string, bool)
	// Snapshot returns an instance's state, or nil when the policy has none.
	Snapshot(p Instance) any
	// Measures returns what the policy type measures; nil when it measures nothing.
	Measures() *Metrics

	// Composition is how the policy composes and reloads (rank, async-only, replacement,
	// live changes, permits).
	Composition() Composition
	// Params returns the attributes of the policy's directive as the code generator sees
	// them: its configuration attributes, in table order, then those only code gives.
	Params() []Param
	// Package returns the import path of the policy's package.
	Package() string
}

// Descriptor describes a policy type whose options produce settings S. A policy package
// fills one in and registers it; everything a registry does with the policy goes through
// it.
type Descriptor[S any] struct {
	L        policy.Layer              // the layer and configuration segment, e.g. "retry"
	Attrs    []Attr[S]                 // the configuration attributes
	Defaults func() S                  // the built-in defaults
	Common   func(*S) *Common          // the Common embedded in S
	Config   func(*S) any              // the part of S compared when a name is shared
	Build    func(S) (Instance, error) // builds an instance; nil when the registry builds one per composition
	Validate func(*S) error            // checks the ranges as Build does, without building; nil: CheckRange builds
	ID       func(Instance) string     // an instance's id; nil: its InstanceID() string method
	Of       func(Instance) any        // an instance's configuration, as Config returns it
	State    func(Instance) any        // an instance's snapshot; nil: none
	Result   func(*S) reflect.Type     // the result type a result predicate needs; may be nil
	Metrics  *Metrics                  // what its instances measure; nil: nothing

	// Composition and code generation.
	Compose   Composition // the place in the default order, async-only, replacement, live changes, permits
	CodeAttrs []Param     // the directive attributes that only code gives (error lists, a method), after Attrs
	// Pkg is the import path of the policy's package when S is declared in another (an
	// internal package it shares with a sibling); "": the package that declares S.
	Pkg string
}

// Layer implements Kind.
func (d *Descriptor[S]) Layer() policy.Layer { return d.L }

// Table returns the attribute table.
func (d *Descriptor[S]) Table() Attrs[S] { return Attrs[S]{Segment: string(d.L), List: d.Attrs} }

// Attributes implements Kind.
func (d *Descriptor[S]) Attributes() []string { return d.Table().Names() }

// Check implements Kind.
func (d *Descriptor[S]) Check(attr, value string) error {
	s := d.Defaults()
	return d.Table().Set(&s, attr, value)
}

// CheckRange implements Kind, with Validate, else by building an instance and dropping it
// (which costs what the instance holds, e.g. a circuit breaker's window); a kind with
// neither has nothing to check.
func (d *Descriptor[S]) CheckRange(values map[string]string) (string, error) {
	attr, err := d.RangeError(values)
	if _, set := values[attr]; !set {
		return "", nil
	}
	return attr, err
}

// RangeError implements Kind, as CheckRange does.
func (d *Descriptor[S]) RangeError(values map[string]string) (string, error) {
	if d.Validate == nil && d.Build == nil {
		return "", nil
	}
	s := d.Defaults()
	table := d.Table()
	for attr, v := range values {
		if err := table.Set(&s, attr, v); err != nil {
			return attr, err
		}
	}
	var err error
	if d.Validate != nil {
		err = d.Validate(&s)
	} else {
		_, err = d.Build(s)
	}
	var ce *policy.ConfigError
	if !errors.As(err, &ce) {
		return "", nil
	}
	attr, ok := strings.CutPrefix(ce.Key, string(d.L)+".")
	if !ok {
		return "", nil
	}
	return attr, err
}

// IDOf implements Kind, with the descriptor's ID, else with p's InstanceID() string method.
func (d *Descriptor[S]) IDOf(p Instance) (string, bool) {
	if d.ID != nil {
		return d.ID(p), true
	}
	return MethodID(p)
}

// MethodID returns the id p's InstanceID() string method gives; false when p has none.
func MethodID(p Instance) (string, bool) {
	h, ok := p.(interface{ InstanceID() string })
	if !ok {
		return "", false
	}
	return h.InstanceID(), true
}

// IDOf returns the id of p, an instance of layer l, as l's kind tells it (Kind.IDOf), or
// from p's InstanceID() string method when l is not registered; false when neither tells.
func IDOf(l policy.Layer, p Instance) (string, bool) {
	if k, ok := Lookup(l); ok {
		return k.IDOf(p)
	}
	return MethodID(p)
}

// Snapshot implements Kind.
func (d *Descriptor[S]) Snapshot(p Instance) any {
	if d.State == nil {
		return nil
	}
	return d.State(p)
}

// Measures implements Kind.
func (d *Descriptor[S]) Measures() *Metrics { return d.Metrics }

var (
	mu    sync.RWMutex
	kinds = map[policy.Layer]Kind{}
)

// Register adds k to the kinds a registry knows, and returns the function that removes
// it again. A policy package registers its descriptor once, in init; registering a layer
// twice panics, as it is a programming error.
func Register(k Kind) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[k.Layer()]; dup {
		panic("kind: layer " + string(k.Layer()) + " registered twice")
	}
	kinds[k.Layer()] = k
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(kinds, k.Layer())
	}
}

// Lookup returns the kind of layer l.
func Lookup(l policy.Layer) (Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := kinds[l]
	return k, ok
}

// All returns every registered kind, sorted by layer.
func All() []Kind {
	mu.RLock()
	defer mu.RUnlock()
	return lo.Map(slices.Sorted(maps.Keys(kinds)), func(l policy.Layer, _ int) Kind { return kinds[l] })
}

// DescriptorOf returns the registered descriptor of the policy kind whose settings are S.
func DescriptorOf[S any]() (*Descriptor[S], bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, k := range kinds {
		if d, ok := k.(*Descriptor[S]); ok {
			return d, true
		}
	}
	return nil, false
}

// Same reports whether two configurations are the same for sharing an instance: equal
// values, with what they hold by reference compared by identity. Error values, random
// sources and predicates are the same only when they are the same value (an error is
// matched with errors.Is by identity, so two errors with the same text are different);
// slices are the same when their elements are. It never reads what a pointer or an
// interface points to, so it does not race with an instance in use.
func Same(a, b any) bool {
	return same(reflect.ValueOf(a), reflect.ValueOf(b))
}

func same(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !same(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() && (a.Len() > 0 || b.Len() > 0) {
			return false
		}
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !same(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		ea, eb := a.Elem(), b.Elem()
		if ea.Type() != eb.Type() {
			return false
		}
		if ea.Kind() == reflect.Pointer || ea.Kind() == reflect.Func || ea.Kind() == reflect.Map ||
			ea.Kind() == reflect.Chan || ea.Kind() == reflect.UnsafePointer {
			return identity(ea, eb)
		}
		return same(ea, eb)
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return identity(a, b)
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() || (a.Float() != a.Float() && b.Float() != b.Float())
	default: // booleans, integers, strings, complex numbers
		return a.Equal(b)
	}
}

// identity compares references: the same pointer, or both nil; functions are the same
// only when both are nil.
func identity(a, b reflect.Value) bool {
	if a.Kind() == reflect.Func {
		return a.IsNil() && b.IsNil()
	}
	return a.Pointer() == b.Pointer()
}
