package retry

import "github.com/resilience4go/resilience4go/internal/contract"

// permitsFrom returns r bound to src: a retry that waits, with WaitForPermit (or with
// src.Always, whatever a reload sets WaitForPermit to), only for the permits of the rate
// limiter src.Limiter (and, when src.Rejection is set, only for rejections that are that
// very error), where r, as New returns it, waits for any limiter that refused an attempt.
// It is the same retry in all else: the same instance id, configuration, live changes (a
// change made through either is seen by both), classification of errors and events. r
// itself is unchanged.
//
// A registry calls it, through the descriptor, when it composes a retry: it binds the
// retry to the composition's own rate limiter, or to none when the composition has no
// rate limiter, so that one retry shared by name among several compositions waits, in
// each, for that composition's limiter only. permitsFrom on a Retry not built by New
// returns a Retry that is not built either. It allocates the returned Retry, once; it is
// safe for concurrent use.
func (r *Retry) permitsFrom(src contract.PermitSource) *Retry {
	if r == nil {
		return &Retry{src: src, bound: true}
	}
	return &Retry{core: r.core, src: src, bound: true, gate: r.gate}
}

// limitedBy returns r bound to gate: a retry that asks gate before each retry, and ends
// the call as it is when gate refuses (see NewPolicy). It is the same retry in all else,
// as permitsFrom's is; r itself is unchanged. A registry calls it, through the
// descriptor, when the composition of a retry has a layer that limits attempts. It
// allocates the returned Retry, once; it is safe for concurrent use.
func (r *Retry) limitedBy(gate contract.AttemptGate) *Retry {
	if r == nil {
		return &Retry{gate: gate}
	}
	b := *r
	b.gate = gate
	return &b
}
