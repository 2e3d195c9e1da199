package codegen

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests load packages with golang.org/x/tools/go/packages, which runs go list as a
// subprocess and waits for it: no goroutine outlives a call.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
