package circuitbreaker

import "strconv"

// State is a breaker's state.
type State int

// The states. Closed, Open and HalfOpen are the breaker's own cycle; Disabled and
// ForcedOpen are set by hand (Disable, ForceOpen) and left by Reset. String names them
// in events, errors and logs: "closed", "open", "half-open", "disabled", "forced-open".
const (
	// Closed: calls pass and their outcomes fill the sliding window.
	Closed State = iota
	// Open: calls are rejected with ErrOpen until WaitInOpen has passed.
	Open
	// HalfOpen: PermittedInHalfOpen trial calls pass; their outcomes decide between
	// Closed and Open, unless they take longer than MaxWaitInHalfOpen: then Open.
	HalfOpen
	// Disabled: every call passes and nothing is recorded.
	Disabled
	// ForcedOpen: every call is rejected with ErrOpen.
	ForcedOpen
)

var stateNames = [...]string{"closed", "open", "half-open", "disabled", "forced-open"}

// String returns "closed", "open", "half-open", "disabled" or "forced-open".
func (s State) String() string {
	if s < Closed || s > ForcedOpen {
		return "State(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}

// Snapshot is a breaker's state and metrics at one instant.
//
// The metrics are those of the current state: closed, the sliding window; half-open, the
// trial calls so far; open, whichever of the two opened the breaker; disabled and
// forced-open, none (rates -1; BufferedCalls, FailedCalls and SlowCalls 0).
// NotPermittedCalls counts the calls rejected since the breaker entered its current
// state.
type Snapshot struct {
	Instance          string  // the instance id
	State             State   // the current state
	FailureRate       float64 // percent of buffered calls that failed; -1 while fewer than the minimum
	SlowCallRate      float64 // percent of buffered calls that were slow; -1 while fewer than the minimum
	BufferedCalls     int     // outcomes counted (successes and failures)
	FailedCalls       int     // of which failures
	SlowCalls         int     // of which slow (successful or failed)
	NotPermittedCalls int     // calls rejected in the current state
}

// Handle is the view of a breaker that a registry hands out (resilience.Lookup[Handle]
// with Layer): read its state, and force
// it open, disable it or reset it by hand. *Breaker implements it; see its methods. It
// is safe for concurrent use.
type Handle interface {
	InstanceID() string // the breaker's id
	State() State       // the current state, read without a lock
	Snapshot() Snapshot // the state and its metrics
	ForceOpen()         // reject every call until Reset or Disable
	Disable()           // let every call pass, recording nothing, until Reset or ForceOpen
	Reset()             // back to closed (or disabled, as built) with an empty window
}

var _ Handle = (*Breaker)(nil)
