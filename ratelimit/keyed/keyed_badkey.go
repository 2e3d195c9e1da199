package keyed

import (
	"context"
	"reflect"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Keys that a keyed limiter cannot hold: a key not equal to itself (a NaN, or a value
// holding one) would never be found again, so each of its calls would get a new cell with
// a full burst and take a place; a key of an interface type holding a value that
// cannot be compared (a slice, a map, a function) cannot be hashed at all. Every call
// refuses such a key with codeBadKey. The check is chosen once, from K: key
// types that can hold neither a float nor an interface pay nothing.

// codeBadKey is the code of the error that refuses a call for a key that is not equal to
// itself: a NaN, or a value holding one (in a field, an element or an interface), which no
// call could find again; or a key of an interface type holding a value that cannot be
// compared (a slice, a map, a function).
const codeBadKey = "R4C-RLM-001"

// keyCheck is how a keyed limiter checks that a key of its type K is equal to itself.
type keyCheck uint8

const (
	keysEqual   keyCheck = iota // K holds no float and no interface: every key is equal to itself
	keysFloat                   // K holds a float or a complex (itself, in a field or an element), no interface: key == key tells
	keysDynamic                 // K holds an interface: a key may also hold a value that cannot be compared
)

// keyCheckOf returns the check that keys of type t need.
func keyCheckOf(t reflect.Type) keyCheck {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return keysFloat
	case reflect.Interface:
		return keysDynamic
	case reflect.Array:
		if t.Len() == 0 {
			return keysEqual
		}
		return keyCheckOf(t.Elem())
	case reflect.Struct:
		c := keysEqual
		for i := range t.NumField() {
			c = max(c, keyCheckOf(t.Field(i).Type))
		}
		return c
	}
	return keysEqual // pointers and channels compare by address; strings, integers, booleans by value
}

// usable reports whether key can be held: it is equal to itself, and comparable.
func (k *Limiter[K]) usable(key K) bool {
	switch k.check {
	case keysEqual:
		return true
	case keysFloat:
		return key == key
	}
	return selfEqual(key)
}

// selfEqual reports whether key is equal to itself, false when comparing it panics (an
// interface holding a value that cannot be compared). It compares rather than asking
// reflect, so that a key of a struct type holding an interface is not boxed.
func selfEqual[K comparable](key K) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return key == key
}

// refuseBadKey publishes and records the refusal of the call with ctx for key, which
// usable refused, and returns its error, with codeBadKey.
func (k *Limiter[K]) refuseBadKey(ctx context.Context, key K) error {
	ks := k.keyString(key)
	err := r4c.Errorf(codeBadKey, "key", ks,
		"a key must be equal to itself (a NaN is not, nor a value holding one) and comparable: "+
			"no call could find it again, so it is refused")
	k.reject(rlcore.OrBackground(ctx), key, k.base.now(), 0, err)
	return err
}
