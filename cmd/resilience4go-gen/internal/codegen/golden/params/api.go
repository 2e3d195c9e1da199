// Package params holds an interface whose parameters have the names the generated code
// gives its own variables (w, err, impl, reg, a, ctx) or its imports (time, policy,
// resilience, context), or no names at all, with its generated wrapper. A fallback
// function named impl and an error variable named a make the generated constructor
// rename its own variables.
package params

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/resilience4go/resilience4go/async"
)

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// a is an error that a retry aborts on, named like the generated code's argument struct
// variable.
//
//lint:ignore ST1012 the name is the point: the generated code has a variable named a.
var a = errors.New("params: a")

// impl is a fallback function named like the generated constructor's parameter.
func impl(context.Context, error) (string, error) { return "impl", nil }

// Store has methods whose parameter names clash with the generated code's.
type Store interface {
	// Put has three arguments, named like the generated method's receiver, its error
	// variable and the constructor's parameter, and returns an error only.
	//
	//resilience:retry maxAttempts=2 abortOn=a
	Put(ctx context.Context, w io.Writer, err error, impl string) error

	// Get has two arguments named like the constructor's parameter and the argument
	// struct variable, and a fallback function named impl.
	//
	//resilience:timeout duration=1s
	//resilience:fallback method=impl
	Get(ctx context.Context, reg string, a int) (string, error)

	// At has an argument named like the package of its type.
	//
	//resilience:ratelimiter permits=5 period=1s
	At(ctx context.Context, time time.Duration) (string, error)

	// Policy returns a future, and has arguments named like the generated file's imports,
	// the last one variadic.
	//
	//resilience:timeout duration=2s
	Policy(ctx context.Context, policy string, resilience ...string) *async.Future[int]

	// Tag has no parameter names.
	//
	//resilience:timeout duration=3s
	Tag(context.Context, string, ...string) error

	// Last has a blank context and an argument named ctx.
	//
	//resilience:timeout duration=4s
	Last(_ context.Context, ctx string) (string, error)

	// One has an argument named like the context package, and returns an error only.
	//
	//resilience:timeout duration=5s
	One(ctx context.Context, context string) error

	// Args has an argument named like its argument struct.
	//
	//resilience:timeout duration=6s
	Args(ctx context.Context, storeArgsArgs string, n, m int) (int, error)
}
