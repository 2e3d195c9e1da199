package ratelimit

import (
	"context"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
)

// TryAcquire takes a permit for key that is free now and reports whether it did; it never
// waits, whatever MaxWait is. A refusal publishes an EventRejected event. Its outcome
// is recorded with context.Background() and the key: ResultAdmitted (Wait 0) or
// ResultRejected. For a key that has a cell it never allocates. A key not equal to itself
// (see Keyed) is refused: false. A disabled limiter always returns true; a zero Keyed,
// never built, false.
func (k *Keyed[K]) TryAcquire(key K) bool {
	// An enabled in-process limiter and a string key kept as it is: the lookup and GCRA,
	// written out here (generic methods are not inlined into one another). A zero Keyed
	// has no key type (otherKeys) and takes the general path. A cell found dead (evicted
	// meanwhile) takes the general path too.
	if k != nil && k.keys == stringKeys && k.backend == nil {
		if r := k.base.rate.Load(); r != nil && r.direct {
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
						if e.slots.none() {
							prev, _, wait, ok = gcraReserve(&e.slots.tat, r.interval, r.tau, now, 0)
						} else {
							prev, _, wait, ok = e.slots.takeFreed(now, r.interval, r.tau, 0)
						}
						if ok || prev != deadTAT {
							return k.tried(key, now, wait, ok) == nil
						}
						break
					}
				}
				// A new key, one being moved by a writer, or a dead cell: under the lock.
				d := k.takeLocked(s, key, h, r, 1, 0)
				return k.tried(key, d.now, d.wait, d.ok) == nil
			}
		}
	}
	return k.tryAcquire(key, k.lim().cur(), 1) == nil
}

// tried reports a TryAcquire for key decided at now: nil when admitted, else the
// rejection, whose retry-after is wait.
func (k *Keyed[K]) tried(key K, now, wait int64, ok bool) error {
	ctx := context.Background()
	if !ok {
		k.reject(ctx, key, now, wait, k.base.rej.Plain)
		return k.base.rej.Plain
	}
	k.admitted(ctx, key, 0)
	return nil
}

// TryAcquireN takes n permits for key that are free now, all of them or none, as
// Limiter.TryAcquireN does: nil when they are the caller's, the limiter's rejection
// (matching ErrExceeded) when they are not all free now, a *BurstError matching
// ErrExceedsBurst when n is more than Permits (nothing is taken), and a
// *policy.ConfigError with code R4C-ATR-003 when n < 1, or with CodeBadKey (R4C-RLM-001)
// for a key not equal to itself (see Keyed). Events, outcomes and allocations
// are TryAcquire's (a *BurstError is recorded as a ResultRejected; n < 1 is not
// recorded).
func (k *Keyed[K]) TryAcquireN(key K, n int) error {
	l := k.lim()
	r := l.cur()
	if err := r.check(n); err != nil {
		return k.refuseCount(context.Background(), key, err)
	}
	return k.tryAcquire(key, r, n)
}

func (k *Keyed[K]) tryAcquire(key K, r *rate, n int) error {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
		return l.offErr()
	}
	ctx := context.Background()
	if k.check != keysEqual && !k.usable(key) {
		return k.refuseBadKey(ctx, key)
	}
	key = k.bounded(key)
	d := k.decide(ctx, key, r, n, 0)
	if !d.ok {
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return l.rej.Plain
	}
	k.admitted(ctx, key, 0)
	return nil
}

// Acquire takes a permit for key, waiting for it on the caller's goroutine through the
// clock when it comes within MaxWait, as Limiter.Acquire does. It returns nil once the
// permit is the caller's, or the limiter's rejection, which matches ErrExceeded:
//   - at once, without reserving, when no permit comes within MaxWait;
//   - at once, without reserving and without an event, when ctx is nil (the error also
//     matches policy.ErrNilContext) or already done (it also matches ctx's error);
//   - at once, without reserving, when ctx's deadline comes before the permit would (it
//     also matches context.DeadlineExceeded);
//   - when ctx ends during the wait: the permit is given back as Reservation.Cancel gives
//     it, and the error also matches ctx's error.
//
// A key not equal to itself (see Keyed) is refused at once with a *policy.ConfigError,
// code CodeBadKey (R4C-RLM-001), which does not match ErrExceeded.
// With a Backend, the key's store decides, within ctx. A wait publishes a
// EventWaited event, a rejection an EventRejected event, with ctx. The
// outcome is recorded as Limiter.Acquire records it, with the key. For a key that has a
// cell it allocates nothing unless it has to wait. A disabled limiter returns nil at once,
// but for a nil or done ctx, whose error it returns as is; a zero Keyed, never built, a
// rejection matching ErrExceeded.
func (k *Keyed[K]) Acquire(ctx context.Context, key K) error {
	return k.acquire(ctx, key, k.lim().cur(), 1)
}

// AcquireN is Acquire for n permits for key, taken together, as Limiter.AcquireN: a call
// for more than Permits fails at once with a *BurstError matching ErrExceedsBurst, n < 1
// with a *policy.ConfigError, code R4C-ATR-003. Events and outcomes are Acquire's (a
// *BurstError is recorded as a ResultRejected; n < 1 is not recorded).
func (k *Keyed[K]) AcquireN(ctx context.Context, key K, n int) error {
	l := k.lim()
	r := l.cur()
	if err := r.check(n); err != nil {
		return k.refuseCount(ctx, key, err)
	}
	return k.acquire(ctx, key, r, n)
}

func (k *Keyed[K]) acquire(ctx context.Context, key K, r *rate, n int) error {
	l := k.lim()
	if r.cfg.Disabled || !l.built() {
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
			k.rejected(orBackground(ctx), ks, rej)
		}
		return rej
	}
	if k.check != keysEqual && !k.usable(key) {
		return k.refuseBadKey(ctx, key)
	}
	key = k.bounded(key)
	limit, byDeadline := waitLimit(ctx, r.maxWait)
	d, err := k.decideCtx(ctx, key, r, n, limit)
	switch {
	case err != nil:
		return k.rejectContext(ctx, key, l.now(), 0, err)
	case !d.ok && afterDeadline(d.wait, limit, byDeadline, r.maxWait):
		return k.rejectContext(ctx, key, d.now, d.wait, context.DeadlineExceeded)
	case !d.ok:
		k.reject(ctx, key, d.now, d.wait, l.rej.Plain)
		return l.rej.Plain
	case d.wait == 0:
		k.admitted(ctx, key, 0)
		return nil
	}
	k.publishWaited(ctx, key, d.now, d.wait)
	if err := l.clk.Sleep(ctx, time.Duration(d.wait)); err != nil {
		k.reservation(d).Cancel()
		return k.rejectContext(ctx, key, l.now(), 0, err)
	}
	k.admitted(ctx, key, d.wait)
	return nil
}
