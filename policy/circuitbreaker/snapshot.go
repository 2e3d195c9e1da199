package circuitbreaker

// The states, as Snapshot.State, the messages of rejections, events (the attributes "from" and
// "to" of EventTransition) and logs name them. Closed, Open and HalfOpen are the
// breaker's own cycle; Disabled and ForcedOpen are set by hand (TransitionTo) and
// left by Reset. Breaker's documentation tells what moves the breaker between them.
const (
	// Closed ("closed"): calls pass and their outcomes fill the sliding window.
	Closed = "closed"
	// Open ("open"): calls are rejected with ErrOpen until WaitInOpen has passed.
	Open = "open"
	// HalfOpen ("half-open"): PermittedInHalfOpen trial calls pass; their outcomes decide
	// between Closed and Open, unless they take longer than MaxWaitInHalfOpen: then Open.
	HalfOpen = "half-open"
	// Disabled ("disabled"): every call passes and nothing is recorded.
	Disabled = "disabled"
	// ForcedOpen ("forced-open"): every call is rejected with ErrOpen.
	ForcedOpen = "forced-open"
)

// state is a state as the breaker keeps it, in the low bits of its state word.
type state uint8

const (
	stClosed state = iota
	stOpen
	stHalfOpen
	stDisabled
	stForcedOpen
)

// stateNames are the states' names, by state.
var stateNames = [...]string{stClosed: Closed, stOpen: Open, stHalfOpen: HalfOpen, stDisabled: Disabled, stForcedOpen: ForcedOpen}

// String returns the state's name: Closed, Open, HalfOpen, Disabled or ForcedOpen.
func (s state) String() string { return stateNames[s] }

// Snapshot is a breaker's state and metrics at one instant.
//
// The metrics are those of the current state: closed, the sliding window; half-open, the
// trial calls so far; open, whichever of the two opened the breaker; disabled and
// forced-open, none (rates -1; BufferedCalls, FailedCalls and SlowCalls 0).
// NotPermittedCalls counts the calls rejected since the breaker entered its current
// state.
type Snapshot struct {
	Instance          string  // the instance id
	State             string  // the current state: Closed, Open, HalfOpen, Disabled or ForcedOpen
	FailureRate       float64 // percent of buffered calls that failed; -1 while fewer than the minimum
	SlowCallRate      float64 // percent of buffered calls that were slow; -1 while fewer than the minimum
	BufferedCalls     int     // outcomes counted (successes and failures)
	FailedCalls       int     // of which failures
	SlowCalls         int     // of which slow (successful or failed)
	NotPermittedCalls int     // calls rejected in the current state
	// ShadowRejected counts the calls the breaker let through in shadow mode (Shadow)
	// that it would have rejected, since it was built; in shadow mode NotPermittedCalls
	// counts them too.
	ShadowRejected uint64
}
