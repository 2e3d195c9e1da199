// Package unusedimportunguarded has an interface-level directive that applies to no
// method: Close cannot be guarded, and Ping leaves it off. The generated file must not
// import what no method uses (here package time, for the duration).
package unusedimportunguarded

import (
	"context"
	"io"
)

// Closer can be closed and pinged.
//
//resilience:timeout duration=1s
type Closer interface {
	io.Closer
	// Ping is not limited.
	//
	//resilience:none
	Ping(ctx context.Context) error
}
