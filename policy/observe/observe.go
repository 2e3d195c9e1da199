// Package observe is what an observer author implements and reads: an Observer makes a
// Recorder per policy instance, which is told each call's Outcome at that instance's
// layer and the events the instance publishes. A registry takes one with
// resilience.WithObserver; resilienceotel and resilienceslog are observers.
package observe

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// Result says how a call fared at one layer, as a Recorder is told. Its zero value is no
// result.
type Result uint8

// The results a layer records. Which a layer records is listed in Outcome.
const (
	// ResultAdmitted: a rate limiter, bulkhead, adaptive limit or circuit breaker let
	// the call through (Outcome.Wait is how long it waited first; 0 when it did not).
	ResultAdmitted Result = iota + 1
	// ResultRejected: the layer refused the call (Outcome.Err is the rejection); for a
	// whole call, a layer refused it (Outcome.RejectedBy says which).
	ResultRejected
	// ResultSucceeded: the call returned, and the layer counts it as a success.
	ResultSucceeded
	// ResultFailed: the call returned an error the layer counts as a failure
	// (Outcome.Err).
	ResultFailed
	// ResultIgnored: a circuit breaker's call returned an error that counts neither as
	// a success nor as a failure (its ignoreOn).
	ResultIgnored
	// ResultTimedOut: the call ran past a timeout layer's deadline.
	ResultTimedOut
	// ResultAborted: a retry stopped on an outcome it does not retry, because the
	// caller's context ended, or before a wait that would end after the context's
	// deadline (Outcome.Err is the error the call ends with).
	ResultAborted
)

// LayerCall is the layer under which an Observer is asked for the Recorder of a whole
// wrapped function or pipeline, whose id is the wrap's. It is not a layer of the order:
// no policy has it, and an order that names it is R4C-REG-011.
const LayerCall policy.Layer = "call"

// Outcome is what a layer records of one call. It is passed by value; each field has one
// meaning whatever the layer, and is zero where it does not apply.
//
// What each layer records, once per call (a retry's and a hedge's inner layers once per
// attempt):
//
//   - rateLimiter, bulkhead, adaptiveLimit: ResultAdmitted when the call is let through
//     (once its wait is over, for a call that waited) or ResultRejected when it is
//     refused (Key is the client's key for a keyed limiter);
//   - circuitBreaker: ResultRejected when it does not permit the call; else, once the
//     call ends, ResultSucceeded, ResultFailed or ResultIgnored, with Latency and Slow;
//   - retry: once the call ends, ResultSucceeded, ResultFailed (every attempt made) or
//     ResultAborted, with Attempts;
//   - hedge: once the call ends, ResultSucceeded or ResultFailed, with Attempts (the
//     attempts started) and Latency;
//   - timeout: once the call ends, ResultSucceeded, ResultFailed or ResultTimedOut, with
//     Latency;
//   - LayerCall, the whole call: ResultSucceeded, ResultFailed (also, with no Err, for a
//     call that panicked), or ResultRejected with RejectedBy when one of the
//     composition's own layers refused it, and Latency.
//
// A fallback records nothing: its fallback.EventApplied event says when it replaced an error.
type Outcome struct {
	Result Result
	// Key is the client's key, for a keyed rate limiter; empty otherwise.
	Key string
	// Wait is, for ResultAdmitted, how long the call waited for its permit or slot.
	Wait time.Duration
	// Latency is, for a call that ended, the time from when it entered the layer until it
	// ended, on the policy's clock.
	Latency time.Duration
	// Attempts is, for a retry, the attempts made (1: the first succeeded or was not
	// retried); for a hedge, the attempts started.
	Attempts int
	// Slow is, for a circuit breaker, whether the call was slower than its slow-call
	// threshold.
	Slow bool
	// RejectedBy is, for a whole call (LayerCall) that was rejected, the layer that
	// refused it (see policy.Rejection).
	RejectedBy policy.Layer
	// Err is the call's error, or the rejection; nil for a success or an admission.
	Err error
}

// Recorder receives one policy instance's outcomes and events, with the context of the
// call they belong to. Its methods run synchronously on the goroutine where the policy
// decides (as a policy.Listener does), so they must be quick, must not block and must not
// call back into the policy; they are called concurrently and must be safe for it.
//
// A recorder that has no use for some of what it would be given may say so with any of
// these methods, which the layers look for when the recorder is made, so that it costs
// less:
//
//   - Untimed() bool: true when it has no use for latencies (asked once). The layers that
//     would read their clock only to measure a latency for it do not, and its outcomes
//     have Latency 0: a recorder that only counts costs no clock reads.
//   - WantsEvent(ctx context.Context, k policy.EventKind) bool: whether it wants an event
//     of kind k about the call with ctx. Before a layer builds an event that no listener
//     receives, it may ask, and then build none when it returns false. It must be quick
//     and safe for concurrent use. Without it, a recorder is given every event.
//   - WantsKeys() bool: false when it has no use for a keyed limiter's keys (asked once).
//     Its outcomes then have no Key, and a keyed limiter does not format a key that is not
//     a string for it.
type Recorder interface {
	// Record is called with each call's outcome at the instance's layer.
	Record(ctx context.Context, o Outcome)
	// Event is called with each event the instance publishes, with the context of the
	// call that caused it; context.Background() for an event no call caused (a
	// ConfigChanged, a backend's failure found by a probe).
	Event(ctx context.Context, e policy.Event)
}

// Observer makes the Recorder of each policy instance. A registry built with an
// observer asks it once per instance, when the instance is built, and once per wrapped
// function or pipeline (layer LayerCall). It may be asked again for a (layer, id) it has
// seen, e.g. when two functions are wrapped with one id: it should then return the same
// recorder. A nil Recorder observes nothing, and that instance then costs what it costs
// without an observer: nothing is measured for it. Instrument is called with the
// registry's lock held: it must not call back into the registry. It is called while the
// instance is built, before the wrap is complete: a wrap that then fails (a bad value of
// another layer) leaves the recorders it asked for unused.
type Observer interface {
	Instrument(layer policy.Layer, id string) Recorder
}
