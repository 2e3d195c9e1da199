// Package foreignsealed embeds an interface with an unexported method of another package.
package foreignsealed

import "github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen/testdata/bad/foreign/other"

// API cannot be implemented outside package other.
//
//resilience:timeout duration=1s
type API interface {
	other.Sealed
}
