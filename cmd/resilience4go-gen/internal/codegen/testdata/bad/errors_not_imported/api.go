// Package errorsnotimported names an error of a package that its file does not import
// and that is no import path either.
package errorsnotimported

import "context"

// API is guarded.
type API interface {
	//resilience:circuitbreaker recordOn=iox.ErrUnexpectedEOF
	Get(ctx context.Context, id string) (string, error)
}
