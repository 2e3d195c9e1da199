// Package shadowedtype has types named like the generated constructor's variables (w,
// impl), which its closures' signatures name after those variables are declared.
package shadowedtype

import "context"

// w is a type named like the generated constructor's wrapper variable.
type w struct{}

// impl is a type named like the generated constructor's parameter.
type impl struct{}

// Maker takes them as arguments.
type Maker interface {
	// Take returns an error only, so it is wrapped through a closure that names w.
	//
	//resilience:timeout duration=1s
	Take(ctx context.Context, v w) error
	// Give takes three arguments; its closure returns an impl.
	//
	//resilience:timeout duration=1s
	Give(ctx context.Context, x, y, z int) (impl, error)
}
