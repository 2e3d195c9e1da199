// Package argstypeclash has methods whose generated argument structs would have the
// same name: A.BC and AB.C (aBCArgs), Foo.Get and foo.Get (fooGetArgs), and Bar.Get,
// whose barGetArgs the package declares itself. Each needs a name of its own.
package argstypeclash

import "context"

// A has BC.
type A interface {
	// BC takes three arguments.
	//
	//resilience:timeout duration=1s
	BC(ctx context.Context, x, y, z int) (string, error)
}

// AB has C.
type AB interface {
	// C takes three arguments.
	//
	//resilience:timeout duration=1s
	C(ctx context.Context, x, y, z int) (string, error)
}

// Foo is exported.
type Foo interface {
	// Get takes three arguments.
	//
	//resilience:timeout duration=1s
	Get(ctx context.Context, x, y, z int) (string, error)
}

// foo is not.
type foo interface {
	// Get takes three arguments.
	//
	//resilience:timeout duration=1s
	Get(ctx context.Context, x, y, z int) (string, error)
}

// Bar's argument struct has a name the package has taken.
type Bar interface {
	// Get takes three arguments.
	//
	//resilience:timeout duration=1s
	Get(ctx context.Context, x, y, z int) (string, error)
}

// barGetArgs is the package's own.
type barGetArgs struct{}

var (
	_ foo
	_ barGetArgs
)
