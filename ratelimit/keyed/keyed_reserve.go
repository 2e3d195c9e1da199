package keyed

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Reserve takes n permits for key, together, if they come within MaxWait, without
// waiting for them, and returns their Reservation, as ratelimit.Limiter.Reserve and
// ReserveN do: wait its Delay() before the call, or Cancel() it to give the permits back.
// When they do not come within MaxWait, nothing is reserved and Reserve returns the
// limiter's rejection (matching ratelimit.ErrExceeded) with a refused Reservation whose
// Delay() is the retry-after: how long until n of the key's permits are free. A call for
// more than the key's Permits fails at once with a refused Reservation and a refusal matching
// ratelimit.ErrExceedsBurst, n < 1 with a *policy.ConfigError, code R4C-ATR-003, and a
// key not equal to itself (see Limiter) with one of code R4C-RLM-001. Events and
// allocations are TryAcquire's; its outcome is recorded as a Limiter's Reserve records
// it, with the key (n < 1 is not recorded). A disabled limiter returns a reservation with
// no delay; a zero Limiter, never built, a refused Reservation and a rejection matching
// ErrExceeded.
func (k *Limiter[K]) Reserve(key K, n int) (ratelimit.Reservation, error) {
	r := k.lim().cur()
	if err := k.checkN(r, n); err != nil {
		if err := k.refuseCount(context.Background(), key, r, err); err != nil {
			return ratelimit.Reservation{}, err
		}
		return wrapReservation(rlcore.Reservation{OK: true}), nil // shadow mode: let through, holding nothing
	}
	res, err := k.reserve(key, r, n)
	return wrapReservation(res), err
}

func (k *Limiter[K]) reserve(key K, r *rlcore.Rate, n int) (rlcore.Reservation, error) {
	l := k.lim()
	if r.Cfg.Disabled || !l.built() {
		if err := l.offErr(); err != nil {
			return rlcore.Reservation{}, err
		}
		return rlcore.Reservation{OK: true}, nil
	}
	ctx := context.Background()
	if k.check != keysEqual && !k.usable(key) {
		return rlcore.Reservation{}, k.refuseBadKey(ctx, key)
	}
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, r.MaxWait)
	if d.over != nil {
		if err := k.refuseCount(ctx, key, r, d.over); err != nil {
			return rlcore.Reservation{}, err
		}
		return rlcore.Reservation{OK: true}, nil // shadow mode: let through, holding nothing
	}
	if !d.ok {
		if err := k.refuse(ctx, key, r, d.now, d.wait, l.rej.Plain); err != nil {
			return rlcore.Reservation{Delay: time.Duration(d.wait)}, err
		}
		return rlcore.Reservation{OK: true}, nil // shadow mode: let through, holding nothing
	}
	if r.Cfg.Shadow { // in shadow mode, permits reserved ahead are not waited for
		res := k.reservation(d)
		res.Delay = 0
		k.admitted(ctx, key, 0)
		return res, nil
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
func (k *Limiter[K]) decide(ctx context.Context, key K, r *rlcore.Rate, n int, maxWait int64) decision {
	ep := k.base.b.Epoch.Load() // before the take: a conversion after it makes the epochs differ
	var d decision
	if k.backend == nil {
		d = k.take(ctx, key, r, n, maxWait, 1)
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
func (k *Limiter[K]) decideCtx(ctx context.Context, key K, r *rlcore.Rate, n int, maxWait int64) (decision, error) {
	ep := k.base.b.Epoch.Load()
	if k.backend == nil {
		d := k.take(ctx, key, r, n, maxWait, 1)
		d.epoch = ep
		return d, nil
	}
	d, err := k.takeRemote(ctx, key, r, n, maxWait)
	d.epoch = ep
	return d, err
}

// reservation returns the reservation of d, permits taken.
func (k *Limiter[K]) reservation(d decision) rlcore.Reservation {
	if d.c == nil { // the backend let the call pass with nothing reserved
		return rlcore.Reservation{OK: true}
	}
	r := rlcore.Reservation{Base: &k.base.b, Sched: &d.c.slots, Prev: d.prev, Next: d.next, At: d.at,
		Delay: time.Duration(d.wait), OK: true, Epoch: d.epoch, Gen: d.gen}
	if d.remote {
		r.Sched, r.Store = nil, k.remoteOf(d.c).store
	}
	if d.windowed {
		r.Store, r.Gen = k.multiOf(d.c).Store(), int64(d.slot)
	}
	return r
}
