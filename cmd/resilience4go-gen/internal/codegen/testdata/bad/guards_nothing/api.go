// Package guardsnothing has directives that guard nothing.
package guardsnothing

import (
	"context"
	"io"
)

// Empty can only be closed, so its timeout applies to no method.
//
//resilience:timeout duration=1s
type Empty interface {
	io.Closer
}

// API has no directive of its own for none to leave off.
type API interface {
	//resilience:none
	Get(ctx context.Context) error
}
