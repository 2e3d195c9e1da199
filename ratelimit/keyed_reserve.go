package ratelimit

import (
	"context"
	"time"
)

// Reserve takes the next permit for key if it comes within MaxWait, without waiting for
// it, and returns its Reservation: wait Delay() before the call, or Cancel() it to give
// the permit back. When the permit does not come within MaxWait, nothing is reserved and
// Reserve returns the limiter's rejection (matching ErrExceeded) with a refused
// Reservation whose Delay() is the retry-after: how long until the key's next permit is
// free. A key not equal to itself (see Keyed) is refused with a refused Reservation and a
// *policy.ConfigError, code CodeBadKey (R4C-RLM-001). Events and allocations are
// TryAcquire's. Its outcome is recorded as
// Limiter.Reserve records it, with the key. A disabled limiter returns a reservation with
// no delay; a zero Keyed, never built, a refused Reservation and a rejection matching
// ErrExceeded.
func (k *Keyed[K]) Reserve(key K) (Reservation, error) { return k.reserve(key, k.lim().cur(), 1) }

// ReserveN is Reserve for n permits for key, taken together, as Limiter.ReserveN: a call
// for more than Permits fails at once with a refused Reservation and a *BurstError
// matching ErrExceedsBurst, n < 1 with a *policy.ConfigError, code R4C-ATR-003. Events
// and outcomes are Reserve's (a *BurstError is recorded as a ResultRejected; n < 1 is not
// recorded).
func (k *Keyed[K]) ReserveN(key K, n int) (Reservation, error) {
	l := k.lim()
	r := l.cur()
	if err := r.check(n); err != nil {
		return Reservation{}, k.refuseCount(context.Background(), key, err)
	}
	return k.reserve(key, r, n)
}

func (k *Keyed[K]) reserve(key K, r *rate, n int) (Reservation, error) {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		if err := l.offErr(); err != nil {
			return Reservation{}, err
		}
		return Reservation{ok: true}, nil
	}
	ctx := context.Background()
	if k.check != keysEqual && !k.usable(key) {
		return Reservation{}, k.refuseBadKey(ctx, key)
	}
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, r.maxWait)
	if !d.ok {
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return Reservation{delay: time.Duration(d.wait)}, l.rej.Plain
	}
	if d.wait > 0 {
		k.publishWaited(ctx, key, d.now, d.wait)
	}
	k.admitted(ctx, key, d.wait)
	return k.reservation(d), nil
}

// decide takes n permits for key (bounded) within maxWait at the rate r, for the call
// with ctx: from its store with a backend, else from its in-process cell. The store is
// asked with ctx without its cancellation (the decision is not bounded by ctx, only
// observed with it), so that its answer is never ctx's error.
func (k *Keyed[K]) decide(ctx context.Context, key K, r *rate, n int, maxWait int64) decision {
	ep := k.base.epoch.Load() // before the take: a conversion after it makes the epochs differ
	var d decision
	if k.backend == nil {
		d = k.take(key, r, n, maxWait)
	} else {
		d, _ = k.takeRemote(detached(ctx), key, r, n, maxWait) // a detached ctx never ends: no error
	}
	d.epoch = ep
	return d
}

// detached returns ctx without its cancellation and deadline, keeping its values:
// context.Background() as it is, for the calls that have no context of their own.
func detached(ctx context.Context) context.Context {
	if ctx == context.Background() {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// decideCtx is decide within ctx: the error is ctx's, when it ended before the key's
// store decided.
func (k *Keyed[K]) decideCtx(ctx context.Context, key K, r *rate, n int, maxWait int64) (decision, error) {
	ep := k.base.epoch.Load()
	if k.backend == nil {
		d := k.take(key, r, n, maxWait)
		d.epoch = ep
		return d, nil
	}
	d, err := k.takeRemote(ctx, key, r, n, maxWait)
	d.epoch = ep
	return d, err
}

// reservation returns the Reservation of d, a permit taken.
func (k *Keyed[K]) reservation(d decision) Reservation {
	if d.c == nil { // the backend let the call pass unlimited: nothing to give back
		return Reservation{ok: true}
	}
	r := Reservation{l: k.base, c: d.c, prev: d.prev, next: d.next, at: d.at,
		delay: time.Duration(d.wait), ok: true, remote: d.remote, epoch: d.epoch, gen: d.gen}
	if d.remote {
		r.c, r.rc = nil, k.remoteOf(d.c)
	}
	return r
}
