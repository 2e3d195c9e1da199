package circuitbreaker

import "strconv"

// State is a breaker's state.
type State int

// The states. Closed, Open and HalfOpen are the breaker's own cycle; Disabled and
// ForcedOpen are set by hand (Disable, ForceOpen) and left by Reset.
const (
	// Closed: calls pass and their outcomes fill the sliding window.
	Closed State = iota
	// Open: calls are rejected with ErrOpen until WaitInOpen has passed.
	Open
	// HalfOpen: PermittedInHalfOpen trial calls pass; their outcomes decide between
	// Closed and Open.
	HalfOpen
	// Disabled: every call passes and nothing is recorded.
	Disabled
	// ForcedOpen: every call is rejected with ErrOpen.
	ForcedOpen
)

var stateNames = [...]string{"CLOSED", "OPEN", "HALF_OPEN", "DISABLED", "FORCED_OPEN"}

// String returns "CLOSED", "OPEN", "HALF_OPEN", "DISABLED" or "FORCED_OPEN".
func (s State) String() string {
	if s < Closed || s > ForcedOpen {
		return "State(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}

// Snapshot is a breaker's state and metrics at one instant.
//
// The metrics are those of the current state: in Closed, the sliding window; in HalfOpen,
// the trial calls so far; in Open, whichever of the two opened the breaker; in Disabled
// and ForcedOpen, none. NotPermittedCalls counts the calls rejected since the breaker
// entered its current state.
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

// Handle is the view of a breaker that a registry hands out (SPEC RG-3): read its state,
// and force it open, disable it or reset it by hand.
type Handle interface {
	InstanceID() string
	State() State
	Snapshot() Snapshot
	ForceOpen()
	Disable()
	Reset()
}

var _ Handle = (*Breaker)(nil)
