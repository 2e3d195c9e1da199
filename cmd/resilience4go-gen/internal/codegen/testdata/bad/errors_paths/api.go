// Package errorspaths names errors by import paths it may not import.
package errorspaths

import "context"

// API names, in turn: itself, the standard library's internal package, a vendored one, a
// program, and a pattern.
type API interface {
	//resilience:retry abortOn=github.com/resilience4go/resilience4go/internal/codegen/testdata/bad/errors_paths.ErrX
	A(ctx context.Context) error
	//resilience:retry abortOn=internal/poll.ErrFileClosing
	B(ctx context.Context) error
	//resilience:retry abortOn=vendor/golang.org/x/net/http2/hpack.ErrStringLength
	C(ctx context.Context) error
	//resilience:retry abortOn=github.com/resilience4go/resilience4go/examples/codegen.ErrNotFound
	D(ctx context.Context) error
	//resilience:retry abortOn=std.ErrX
	E(ctx context.Context) error
}

// ErrX is an error of this package.
var ErrX error
