// Package typed holds interfaces of which the go:generate line names some with -type: an
// exported one, an unexported one with an unexported method, and one without directives,
// whose wrapper only passes calls through; Gamma has directives but is not named, so it
// has no wrapper. With their generated wrappers.
package typed

import (
	"context"
	"time"
)

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen -type Alpha,beta,Plain

// Alpha is exported.
type Alpha interface {
	// Get is guarded by a bulkhead.
	//
	//resilience:bulkhead maxConcurrent=2
	Get(ctx context.Context, id int) (string, error)
}

// beta is unexported, and so are its wrapper and its constructor.
//
//resilience:timeout duration=100ms
type beta interface {
	// get is unexported, and takes three arguments.
	get(ctx context.Context, id int, at time.Time, tags []string) (string, error)
	// Put returns an error only.
	Put(ctx context.Context, v string) error
}

// Plain has no directives: its wrapper calls the implementation directly.
type Plain interface {
	// Get has no directive.
	Get(ctx context.Context, id int) (string, error)
	// Count has no context.
	Count() int
}

// Gamma has a directive but is not named by -type.
type Gamma interface {
	// Get is guarded by a timeout.
	//
	//resilience:timeout duration=1s
	Get(ctx context.Context) (string, error)
}
