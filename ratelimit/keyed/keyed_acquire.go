package keyed

import (
	"context"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// TryAcquire takes n permits for key that are free now, all of them or none, and never
// waits, whatever MaxWait is, as ratelimit.Limiter.TryAcquire and TryAcquireN do. It
// returns nil when they are the caller's, or:
//   - the limiter's rejection, matching ratelimit.ErrExceeded, when they are not all free
//     now;
//   - a refusal matching ratelimit.ErrExceedsBurst (and not ErrExceeded), when n is more
//     than the key's Permits (its own, for a key with a limit of its own): such a call
//     can never pass, and takes nothing;
//   - a *policy.ConfigError with code R4C-ATR-003 when n < 1, or with code R4C-RLM-001
//     for a key not equal to itself (see Limiter).
//
// A refusal publishes a ratelimit.EventRejected event. Its outcome is recorded with
// context.Background() and the key: ResultAdmitted (Wait 0) or ResultRejected (n < 1 is
// no decision: nothing is recorded). For a key that has a cell it never allocates. A
// disabled limiter lets every n from 1 to Permits pass; a zero Limiter, never built,
// refuses every call.
func (k *Limiter[K]) TryAcquire(key K, n int) error {
	// One permit, an enabled in-process limiter and a string key kept as it is: the lookup
	// and GCRA, written out here (generic methods are not inlined into one another). A
	// zero Limiter has no key type (otherKeys) and takes the general path. A cell found
	// dead (evicted meanwhile) takes the general path too.
	if n == 1 && k != nil && k.keys == stringKeys && k.backend == nil {
		if r := k.base.rate.Load(); r != nil && !r.Cfg.Disabled && r.NMore == 0 {
			if ks := asString(&key); len(ks) <= k.keyBytes && !strings.HasPrefix(ks, digestPrefix) {
				h := k.strHash(ks)
				s := &k.shards[0]
				if k.nshards > 1 {
					s = &k.shards[shardIndex(h, k.nshards)]
				}
				if t := s.index.Load(); t != nil {
					i := h & t.mask
					for dist := uint64(0); ; dist++ {
						sl := &t.slots[i]
						e := sl.e.Load()
						if e == nil {
							break
						}
						sh := sl.hash.Load()
						if sh != h || asString(&e.key) != ks {
							if (i-sh)&t.mask < dist {
								break
							}
							i = (i + 1) & t.mask
							continue
						}
						now := k.base.now()
						var prev, wait int64
						var ok bool
						if e.slots.Bare() { // most keys: GCRA at the limiter's rate
							prev, _, wait, ok = rlcore.GCRA(&e.slots.TAT, r.Interval, r.Tau, now, 0)
						} else {
							rr := e.slots.RateOr(r) // the key's own rate, if it has one
							switch {
							case rr.NMore > 0:
								return k.tryAcquire(key, r, 1)
							case e.slots.None():
								prev, _, wait, ok = rlcore.GCRA(&e.slots.TAT, rr.Interval, rr.Tau, now, 0)
							default:
								prev, _, wait, ok = e.slots.TakeFreed(now, rr.Interval, rr.Tau, 0)
							}
						}
						if ok || prev != rlcore.DeadTAT {
							return k.tried(key, r, now, wait, ok)
						}
						break
					}
				}
				// A new key, one being moved by a writer, or a dead cell: under the lock.
				d := k.takeLocked(context.Background(), s, key, h, r, 1, 0, 1)
				return k.tried(key, r, d.now, d.wait, d.ok)
			}
		}
	}
	r := k.lim().cur()
	if err := k.checkN(r, n); err != nil {
		return k.refuseCount(context.Background(), key, r, err)
	}
	return k.tryAcquire(key, r, n)
}

// tried reports a TryAcquire for key decided at now at the rate r: nil when admitted,
// else the rejection, whose retry-after is wait (nil in shadow mode, see refuse).
func (k *Limiter[K]) tried(key K, r *rlcore.Rate, now, wait int64, ok bool) error {
	ctx := context.Background()
	if !ok {
		return k.refuse(ctx, key, r, now, wait, k.base.rej.Plain)
	}
	k.admitted(ctx, key, 0)
	return nil
}

func (k *Limiter[K]) tryAcquire(key K, r *rlcore.Rate, n int) error {
	l := k.lim()
	if r.Cfg.Disabled || !l.built() {
		return l.offErr()
	}
	ctx := context.Background()
	if k.check != keysEqual && !k.usable(key) {
		return k.refuseBadKey(ctx, key)
	}
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, 0)
	if d.over != nil {
		return k.refuseCount(ctx, key, r, d.over)
	}
	if !d.ok {
		return k.refuse(ctx, key, r, d.now, d.wait, l.rej.Plain)
	}
	k.admitted(ctx, key, 0)
	return nil
}

// Acquire takes n permits for key, together, waiting for them on the caller's goroutine
// through the clock when they come within MaxWait, as ratelimit.Limiter.Acquire and
// AcquireN do. It returns nil once the permits are the caller's, or the limiter's
// rejection, which matches ratelimit.ErrExceeded:
//   - at once, without reserving, when they do not come within MaxWait;
//   - at once, without reserving and without an event, when ctx is nil (the error also
//     matches policy.ErrNilContext) or already done (it also matches ctx's error);
//   - at once, without reserving, when ctx's deadline comes before the permits would (it
//     also matches context.DeadlineExceeded);
//   - when ctx ends during the wait: the permits are given back as Reservation.Cancel
//     gives them, and the error also matches ctx's error.
//
// A call for more than the key's Permits fails at once with a refusal matching
// ratelimit.ErrExceedsBurst, n < 1 with a *policy.ConfigError, code R4C-ATR-003, and a key
// not equal to itself (see Limiter) with one of code R4C-RLM-001; none of them matches
// ErrExceeded. With a backend, the key's store decides, within ctx. A wait publishes a
// ratelimit.EventWaited event, a rejection a ratelimit.EventRejected event, with ctx. The
// outcome is recorded as a Limiter's Acquire records it, with the key (n < 1 is not
// recorded). For a key that has a cell it allocates nothing unless it has to wait. A
// disabled limiter returns nil at once, but for a nil or done ctx, whose error it returns
// as is; a zero Limiter, never built, a rejection matching ErrExceeded.
func (k *Limiter[K]) Acquire(ctx context.Context, key K, n int) error {
	r := k.lim().cur()
	if err := k.checkN(r, n); err != nil {
		return k.refuseCount(ctx, key, r, err)
	}
	return k.acquire(ctx, key, r, n)
}

func (k *Limiter[K]) acquire(ctx context.Context, key K, r *rlcore.Rate, n int) error {
	l := k.lim()
	if r.Cfg.Disabled || !l.built() {
		if err := l.offErr(); err != nil {
			return err
		}
		return decorate.ContextErr(ctx)
	}
	if err := decorate.ContextErr(ctx); err != nil {
		rej := l.nilCtx
		if err != policy.ErrNilContext {
			rej = l.rej.ForContext(err)
		}
		if l.events.Rec != nil {
			var ks string
			if l.events.Keys {
				ks = k.keyString(k.bounded(key))
			}
			k.rejected(rlcore.OrBackground(ctx), ks, rej)
		}
		return rej
	}
	if k.check != keysEqual && !k.usable(key) {
		return k.refuseBadKey(ctx, key)
	}
	key = k.bounded(key)
	limit, byDeadline := rlcore.WaitLimit(ctx, r.MaxWait)
	d, err := k.decideCtx(ctx, key, r, n, limit)
	switch {
	case err != nil:
		return k.rejectContext(ctx, key, l.now(), 0, err)
	case d.over != nil:
		return k.refuseCount(ctx, key, r, d.over)
	case !d.ok && rlcore.AfterDeadline(d.wait, limit, byDeadline, r.MaxWait):
		return k.refuse(ctx, key, r, d.now, d.wait, l.rej.ForContext(context.DeadlineExceeded))
	case !d.ok:
		return k.refuse(ctx, key, r, d.now, d.wait, l.rej.Plain)
	case d.wait == 0 || r.Cfg.Shadow: // in shadow mode, permits reserved ahead are not waited for
		k.admitted(ctx, key, 0)
		return nil
	}
	k.publishWaited(ctx, key, d.now, d.wait)
	if err := l.b.Clk.Sleep(ctx, time.Duration(d.wait)); err != nil {
		k.reservation(d).Cancel()
		return k.rejectContext(ctx, key, l.now(), 0, err)
	}
	k.admitted(ctx, key, d.wait)
	return nil
}
