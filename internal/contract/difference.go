package contract

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Difference says, for a message, where Same finds a and b different: each field that
// differs and how, e.g. "MaxAttempts: 3 vs 4" or "RetryOn: the error values differ (errors
// are compared by identity, not by text)", in field order, at most maxDifferences of them
// joined by "; " (then "; and more"). It returns "" when Same(a, b). Like Same, it never
// reads what a pointer or an interface points to; values are shown only for numbers,
// booleans and strings, each cut to maxShownValue bytes, so the text stays short whatever
// the configurations hold. A struct field tagged `same:"-"` adds no name to the path (its
// fields are named as the outer struct's); one tagged `same:"<name>"` is named so.
func Difference(a, b any) string {
	d := differ{}
	d.walk(reflect.ValueOf(a), reflect.ValueOf(b), "")
	out := strings.Join(d.found, "; ")
	if d.more {
		out += "; and more"
	}
	return out
}

// maxDifferences is the largest number of differences Difference names.
const maxDifferences = 3

// maxShownValue is the length, in bytes, of the longest value Difference shows whole.
const maxShownValue = 40

var (
	errorType     = reflect.TypeFor[error]()
	predicateType = reflect.TypeFor[*Predicate]()
)

// differ collects the differences of two values.
type differ struct {
	found []string
	more  bool // a difference beyond maxDifferences was found
}

// add records the difference what at path; it reports false once no more are wanted.
func (d *differ) add(path, what string) bool {
	if len(d.found) == maxDifferences {
		d.more = true
		return false
	}
	if path != "" {
		what = path + ": " + what
	}
	d.found = append(d.found, what)
	return true
}

// walk records the differences of a and b, at path; it reports false once no more are
// wanted.
func (d *differ) walk(a, b reflect.Value, path string) bool {
	if same(a, b) {
		return true
	}
	if !a.IsValid() || !b.IsValid() {
		return d.add(path, "set in one configuration only")
	}
	if a.Type() != b.Type() {
		return d.add(path, fmt.Sprintf("a %v vs a %v", a.Type(), b.Type()))
	}
	switch a.Kind() {
	case reflect.Struct:
		t := a.Type()
		for i := range a.NumField() {
			if !d.walk(a.Field(i), b.Field(i), fieldPath(path, t.Field(i))) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		noun := "element"
		if isError(a.Type().Elem()) {
			noun = "error"
		}
		if a.Len() != b.Len() {
			return d.add(path, count(a.Len(), noun)+" vs "+count(b.Len(), noun))
		}
		if noun == "error" {
			return d.add(path, "the error values differ (errors are compared by identity, not by text)")
		}
		for i := range a.Len() {
			if !d.walk(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]") {
				return false
			}
		}
		return true
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() && a.Elem().Type() == b.Elem().Type() && !isError(a.Type()) {
			switch a.Elem().Kind() {
			case reflect.Pointer, reflect.Func, reflect.Map, reflect.Chan, reflect.UnsafePointer:
			default: // compared by value, as Same does
				return d.walk(a.Elem(), b.Elem(), path)
			}
		}
	}
	return d.add(path, leaf(a, b))
}

// leaf says how two values that are not the same differ, when they are neither structs
// nor slices walked further.
func leaf(a, b reflect.Value) string {
	t := a.Type()
	switch {
	case isError(t):
		return "the error values differ (errors are compared by identity, not by text)"
	case t == predicateType:
		return "the predicates differ (a predicate is the same only when it comes from one option value)"
	case a.Kind() == reflect.Func:
		return "functions are never the same"
	case a.Kind() == reflect.Interface && (a.IsNil() || b.IsNil()):
		return "set in one configuration only"
	case a.Kind() == reflect.Interface && a.Elem().Type() != b.Elem().Type():
		return fmt.Sprintf("a %v vs a %v", a.Elem().Type(), b.Elem().Type())
	case a.Kind() == reflect.Interface, a.Kind() == reflect.Pointer, a.Kind() == reflect.Map,
		a.Kind() == reflect.Chan, a.Kind() == reflect.UnsafePointer:
		return fmt.Sprintf("not the same %v (compared by identity)", t)
	}
	return show(a) + " vs " + show(b)
}

// show formats a number, boolean or string, with its type's String method when it has one
// on a value receiver (e.g. a time.Duration), cut to maxShownValue bytes.
func show(v reflect.Value) string {
	switch {
	case v.CanInterface() && v.Type().Implements(reflect.TypeFor[fmt.Stringer]()):
		return cut(v.Interface().(fmt.Stringer).String())
	case v.Kind() == reflect.String:
		return strconv.Quote(cut(v.String()))
	}
	return cut(fmt.Sprint(scalar(v)))
}

// scalar returns v's value as a plain Go value, readable for a field that is not
// exported too.
func scalar(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint()
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.Complex64, reflect.Complex128:
		return v.Complex()
	}
	return "a " + v.Type().String()
}

// cut shortens s to maxShownValue bytes, between characters, marking the cut with "…".
func cut(s string) string {
	if len(s) <= maxShownValue {
		return s
	}
	return Clip(s, maxShownValue) + "…"
}

// Clip returns the longest start of s that is at most n bytes long and ends between
// characters (UTF-8): what an error message shows of a long value.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// isError reports whether values of t are errors held by reference, which Same compares
// by identity.
func isError(t reflect.Type) bool {
	return (t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer) && t.Implements(errorType)
}

// fieldPath is the path of field f of the struct at path.
func fieldPath(path string, f reflect.StructField) string {
	name := f.Name
	switch tag, ok := f.Tag.Lookup("same"); {
	case ok && tag == "-":
		return path
	case ok:
		name = tag
	case f.Anonymous:
		return path
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// count is "1 error", "2 errors".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
