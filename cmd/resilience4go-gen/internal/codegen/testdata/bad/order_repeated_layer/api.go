// Package orderrepeatedlayer orders a layer twice.
package orderrepeatedlayer

import "context"

// API is guarded.
type API interface {
	//resilience:timeout duration=1s
	//resilience:retry maxAttempts=3
	//resilience:order layers=timeout,retry,Timeout
	Get(ctx context.Context, id string) (string, error)
}
