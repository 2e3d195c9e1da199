package chaos

import "errors"

// ErrInjected is the error of an injected call of a chaos policy that has nothing else to
// inject: no Error, Result, Behavior or Latency. It says that the fault is the policy's,
// not the dependency's. A policy given an Error injects that error instead, as is.
var ErrInjected = errors.New("chaos: injected fault")
