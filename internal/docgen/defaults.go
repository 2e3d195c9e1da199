package main

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// attributes returns k's configuration attributes, each with its built-in default as a
// configuration would spell it. The default is read from the descriptor itself: its
// Defaults give the settings, and the attribute's own Set tells which field it sets (the
// one a probe value changes) or, for a boolean or an enumeration, which spelling leaves
// the defaults as they are.
func attributes(k contract.Kind) ([]attribute, error) {
	d := reflect.ValueOf(k)
	if d.Kind() != reflect.Pointer || d.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("kind %s is not a *contract.Descriptor", k.Layer())
	}
	d = d.Elem()
	defaults := d.FieldByName("Defaults").Call(nil)[0]
	attrs := d.FieldByName("Attrs")
	params := map[string]contract.Param{}
	for _, p := range k.Params() {
		params[p.Name] = p
	}
	out := make([]attribute, 0, attrs.Len())
	for i := range attrs.Len() {
		a := attrs.Index(i)
		name := a.FieldByName("Name").String()
		p := params[name]
		set := func(v string) (reflect.Value, bool) {
			s := reflect.New(defaults.Type())
			s.Elem().Set(defaults)
			err := a.FieldByName("Set").Call([]reflect.Value{s, reflect.ValueOf(v)})[0]
			return s.Elem(), err.IsNil()
		}
		def, err := defaultOf(p, defaults, set)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		at := attribute{Name: name, Key: string(k.Layer()) + "." + name, Option: p.Option, Default: def}
		for _, e := range p.Enum {
			at.Values = append(at.Values, e.Spelling)
		}
		out = append(out, at)
	}
	return out, nil
}

// probes are values of each kind that no default is, to find the field an attribute sets.
var probes = map[contract.ValueKind]string{
	contract.DurationValue: "987654321ns",
	contract.IntValue:      "987654321",
	contract.FloatValue:    "0.987654321",
	// A text attribute's probe is read as a list of windows ("permits/period"), the only
	// text attribute of a policy's table.
	contract.StringValue: "987654321/987654321s",
}

// defaultOf returns the default of the attribute p, whose value set applies to a copy of
// the defaults def.
func defaultOf(p contract.Param, def reflect.Value, set func(string) (reflect.Value, bool)) (string, error) {
	var spellings []string
	switch p.Value {
	case contract.BoolValue:
		spellings = []string{"true", "false"}
	case contract.EnumValue:
		for _, e := range p.Enum {
			spellings = append(spellings, e.Spelling)
		}
	default:
		probe, ok := probes[p.Value]
		if !ok {
			return "", fmt.Errorf("no probe for value kind %d", p.Value)
		}
		s, ok := set(probe)
		if !ok {
			return "", fmt.Errorf("probe %q refused", probe)
		}
		leaf, ok := changed(def, s, p.Value)
		if !ok {
			return "", fmt.Errorf("probe %q changed no field of its kind", probe)
		}
		return spell(leaf, p)
	}
	for _, v := range spellings {
		if s, ok := set(v); ok && !differs(def, s) {
			return v, nil
		}
	}
	return "", fmt.Errorf("no value among %v is the default", spellings)
}

// spell writes v, a default field, as a configuration spells it; an attribute without a
// default (one the generator assumes a value for) at its zero value is "none".
func spell(v reflect.Value, p contract.Param) (string, error) {
	if p.Assume != "" && v.IsZero() {
		return "none", nil
	}
	switch p.Value {
	case contract.DurationValue:
		return spellDuration(time.Duration(v.Int())), nil
	case contract.IntValue:
		return strconv.FormatInt(v.Int(), 10), nil
	case contract.FloatValue:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), nil
	case contract.StringValue:
		if v.String() == "" {
			return "none", nil
		}
		return v.String(), nil
	}
	return "", fmt.Errorf("cannot spell a value of kind %d", p.Value)
}

// spellDuration writes d in the largest of s, ms, us and ns that divides it ("60s", not
// "1m0s"), as the option's documentation writes it; 0 is "0".
func spellDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
		if d != 0 && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	if d == 0 {
		return "0"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// changed returns the field of a that differs in b and holds a value of kind vk (a
// duration or an integer field for a duration or integer attribute, a float field for a
// float one, a string field for a text one), in a's copy.
func changed(a, b reflect.Value, vk contract.ValueKind) (reflect.Value, bool) {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if v, ok := changed(a.Field(i), b.Field(i), vk); ok {
				return v, true
			}
		}
	case reflect.Int, reflect.Int64:
		if (vk == contract.IntValue || vk == contract.DurationValue) && a.Int() != b.Int() {
			return a, true
		}
	case reflect.Float64:
		if vk == contract.FloatValue && a.Float() != b.Float() {
			return a, true
		}
	case reflect.String:
		if vk == contract.StringValue && a.String() != b.String() {
			return a, true
		}
	}
	return reflect.Value{}, false
}

// differs reports whether a scalar field of a differs in b (functions, pointers, slices
// and maps are not compared: setting an attribute changes none of them).
func differs(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if differs(a.Field(i), b.Field(i)) {
				return true
			}
		}
		return false
	case reflect.Array:
		for i := range a.Len() {
			if differs(a.Index(i), b.Index(i)) {
				return true
			}
		}
		return false
	case reflect.Bool:
		return a.Bool() != b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() != b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() != b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() != b.Float()
	case reflect.String:
		return a.String() != b.String()
	}
	return false
}
