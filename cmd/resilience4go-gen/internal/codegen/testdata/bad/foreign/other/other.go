// Package other has interfaces that no type outside it can implement or name.
package other

import (
	"context"

	"github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen/testdata/bad/foreign/other/internal/x"
)

// Sealed has an unexported method.
type Sealed interface {
	Get(ctx context.Context) (string, error)
	sealed()
}

type hidden struct{}

// Hidden returns an unexported type.
type Hidden interface {
	Get(ctx context.Context) (hidden, error)
}

// Internal returns a type of an internal package.
type Internal interface {
	Put(ctx context.Context) (x.T, error)
}
