package retry

// PermitSource says whose rate-limiter rejections set a retry's wait when it waits for
// permits (WaitForPermit): see PermitsFrom.
type PermitSource struct {
	// Limiter is the instance id of the rate limiter whose rejections count: a
	// *ratelimit.ExceededError whose InstanceID is Limiter. Empty: none does, and every
	// rejection is waited on like any other error.
	Limiter string
	// Rejection, when set, is that limiter's own rejection error (its Rejection method):
	// then only a rejection that is this very error counts (errors.Is), not one from
	// another limiter that has the same instance id. Default nil: the id decides.
	Rejection error
	// Always true waits for Limiter's permits whatever the configuration's WaitForPermit
	// says, and whatever Reconfigure sets it to. Default false: WaitForPermit decides.
	Always bool
}

// PermitsFrom returns r bound to src: a retry that waits, with WaitForPermit (or with
// src.Always), only for the permits of the rate limiter src.Limiter, where r, as New
// returns it, waits for any limiter that refused an attempt. It is the same retry in all
// else: the same instance id, configuration, Reconfigure (a change made through either is
// seen by both), classification of errors and events. r itself is unchanged.
//
// Package resilience calls it when it composes a retry: it binds the retry to the
// composition's own rate limiter, or to none when the composition has no rate limiter, so
// that one retry shared by name among several compositions waits, in each, for that
// composition's limiter only. PermitsFrom on a Retry not built by New returns a Retry
// that is not built either. It allocates the returned Retry, once; it is safe for
// concurrent use.
func (r *Retry) PermitsFrom(src PermitSource) *Retry {
	if r == nil {
		return &Retry{src: src, bound: true}
	}
	return &Retry{core: r.core, src: src, bound: true}
}
