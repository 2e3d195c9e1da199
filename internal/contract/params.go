package contract

import (
	"reflect"
	"unicode"
	"unicode/utf8"
)

// ValueKind is how the code generator (internal/codegen) reads an attribute's value in a
// directive and writes it as Go.
type ValueKind int

// The kinds of value. The zero ValueKind is none: an attribute the generator does not
// know how to write.
const (
	DurationValue ValueKind = iota + 1 // policy.ParseDuration syntax, written as e.g. 200 * time.Millisecond
	IntValue                           // a decimal whole number
	FloatValue                         // a decimal number
	BoolValue                          // true or false
	StringValue                        // any text, written as a Go string
	EnumValue                          // one of the attribute's Enum spellings, written as its constant
	ErrorsValue                        // error variables separated by commas, for an option of ...error
	MethodValue                        // a function or method of the wrapped interface's package, resolved for each method
	LayersValue                        // layer names separated by commas (an order)
)

// Enum is one value of an enumerated attribute: how a configuration spells it (any
// case) and the constant of the policy's package that the generated code writes for it.
type Enum struct {
	Spelling string // e.g. "TIME_BASED"
	Const    string // e.g. "TimeBased"
}

// Param is an attribute as the code generator sees it: a configuration attribute of the
// policy's table (Config), or one that only code gives (an error list, a method).
type Param struct {
	Name string // the attribute, e.g. "maxWait"
	// Option is the option function of the policy's package that takes the value, e.g.
	// "MaxWait"; "" for a MethodValue, which no option takes.
	Option string
	Value  ValueKind // how the value is read and written
	Enum   []Enum    // an EnumValue's values
	// Leading makes the value the first argument of the policy's spec function in package
	// resilience (resilience.<Layer>(value, options...)) rather than an option; without
	// the value the generated code passes its zero, which leaves it to the configuration.
	Leading bool
	// Assume is, for a configuration attribute without a default, the least demanding
	// valid value, which the generator's range check assumes when a directive leaves the
	// attribute to the configuration; "" for an attribute with a default.
	Assume string
	Config bool // a configuration attribute, checked by the policy's table
}

// Param returns the attribute as the code generator sees it: a configuration attribute
// whose option function is Option, or the name with its first letter in upper case.
func (a Attr[S]) Param() Param {
	opt := a.Option
	if opt == "" && a.Name != "" {
		r, n := utf8.DecodeRuneInString(a.Name)
		opt = string(unicode.ToUpper(r)) + a.Name[n:]
	}
	return Param{Name: a.Name, Option: opt, Value: a.Value, Enum: a.Enum, Leading: a.Leading, Assume: a.Assume, Config: true}
}

// Params implements Kind: the configuration attributes, in table order, then CodeAttrs.
func (d *Descriptor[S]) Params() []Param {
	out := make([]Param, 0, len(d.Attrs)+len(d.CodeAttrs))
	for _, a := range d.Attrs {
		out = append(out, a.Param())
	}
	for _, p := range d.CodeAttrs {
		p.Config = false
		out = append(out, p)
	}
	return out
}

// Package implements Kind: Pkg, or the import path of the package that declares S.
func (d *Descriptor[S]) Package() string {
	if d.Pkg != "" {
		return d.Pkg
	}
	return reflect.TypeFor[S]().PkgPath()
}

// Composition implements Kind.
func (d *Descriptor[S]) Composition() Composition { return d.Compose }
