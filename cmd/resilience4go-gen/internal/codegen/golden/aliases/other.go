package aliases

import (
	"context"
	errs "errors"
	"io"
)

// Opener is in a file that imports package errors under yet another name, which its
// error list uses.
//
//resilience:circuitbreaker ignoreOn=errs.ErrUnsupported,io.EOF
type Opener interface {
	// Open opens name.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

var _ = errs.ErrUnsupported
