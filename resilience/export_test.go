package resilience

import "github.com/resilience4go/resilience4go/policy"

// The package's tests reach these unexported names through the exported ones below.
var (
	FromEnviron       = fromEnviron
	EnvName           = envName
	ErrContextDropped = errContextDropped
)

// MaxKeyLen is maxKeyLen.
const MaxKeyLen = maxKeyLen

// DefaultOrder is defaultOrder.
func DefaultOrder() []policy.Layer { return defaultOrder() }
