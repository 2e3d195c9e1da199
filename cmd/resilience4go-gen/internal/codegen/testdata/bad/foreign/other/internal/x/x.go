// Package x is internal to package other.
package x

// T is a type only other's tree may name.
type T struct{}
