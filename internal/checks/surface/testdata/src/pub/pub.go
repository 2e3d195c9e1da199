// Package pub is a fixture: each exported name below is counted once.
package pub

// A is counted, B is not (unexported), and so is each of A's exported methods.
type A struct{ Field int } // fields are not counted

// M is counted.
func (A) M() {}

func (A) m() {}

// I is counted with its exported method.
type I interface {
	Do()
	hidden()
}

// C and D are counted.
const C, D = 1, 2

// V is counted.
var V = 3

// New is counted, as a function of A's.
func New() A { return A{} }

// F is counted.
func F() {}

type b struct{}

// Exported is not counted: it is a method of an unexported type.
func (b) Exported() {}
