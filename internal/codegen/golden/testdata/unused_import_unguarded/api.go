// Package unusedimportunguarded has an interface-level directive that applies to no
// method: Close cannot be guarded. The generated file must not import what no method
// uses (here package time, for the duration).
package unusedimportunguarded

import "io"

// Closer can only be closed.
//
//resilience:timeout duration=1s
type Closer interface {
	io.Closer
}
