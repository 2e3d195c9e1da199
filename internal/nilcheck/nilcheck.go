// Package nilcheck tells whether a value given as an interface is nil in a way that makes
// its methods fail: nil itself, or a nil pointer, map, slice, func, channel or interface
// inside a non-nil interface.
package nilcheck

import "reflect"

// Is reports whether v is nil, or holds a nil pointer, map, slice, func, channel or
// interface.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
