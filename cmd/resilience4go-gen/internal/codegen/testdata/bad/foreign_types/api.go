// Package foreigntypes embeds interfaces whose methods use types it cannot name.
package foreigntypes

import "github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen/testdata/bad/foreign/other"

// API's Get returns an unexported type, and its Put a type of an internal package.
//
//resilience:timeout duration=1s
type API interface {
	other.Hidden
	other.Internal
}
