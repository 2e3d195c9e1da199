// Package errorsnotimported names an error of a package its file does not import.
package errorsnotimported

import "context"

// API is guarded.
type API interface {
	//resilience:circuitbreaker recordOn=io.ErrUnexpectedEOF
	Get(ctx context.Context, id string) (string, error)
}
