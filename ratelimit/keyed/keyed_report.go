package keyed

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// reject publishes the refusal, with err, of the call with ctx for key (bounded) at now,
// whose retry-after is retryAfter (≤ 0: none known), and records it. Without a listener
// or a recorder it does nothing; with a listener, or a recorder that wants keys
// (recording.KeyFilter), a key that is not a string is formatted, which allocates.
func (k *Limiter[K]) reject(ctx context.Context, key K, now, retryAfter int64, err error) {
	l := k.base
	if !l.events.Observed() {
		return
	}
	var ks string
	if l.events.Listener != nil || l.events.Keys {
		ks = k.keyString(key)
	}
	if l.events.Wants(ctx, ratelimit.EventRejected) {
		l.events.PublishCtx(ctx, policy.Event{Kind: ratelimit.EventRejected, At: time.Duration(now),
			RetryAfter: time.Duration(max(retryAfter, 0)), Err: err, Key: ks})
	}
	k.rejected(ctx, ks, err)
}

// publishWaited publishes the wait of the call with ctx for key (bounded) at now.
func (k *Limiter[K]) publishWaited(ctx context.Context, key K, now, wait int64) {
	if l := k.base; l.events.Observed() {
		l.events.PublishCtx(ctx, policy.Event{Kind: ratelimit.EventWaited, At: time.Duration(now),
			Wait: time.Duration(wait), Key: k.keyString(key)})
	}
}

// admitted records, if outcomes are recorded, that the call with ctx for key (bounded)
// was let through after waiting wait nanoseconds (0: it did not wait).
func (k *Limiter[K]) admitted(ctx context.Context, key K, wait int64) {
	if k.base.events.Rec != nil {
		k.recordAdmitted(ctx, key, wait)
	}
}

// recordAdmitted is admitted's recording, kept out of line so that the check inlines.
func (k *Limiter[K]) recordAdmitted(ctx context.Context, key K, wait int64) {
	var ks string
	if k.base.events.Keys {
		ks = k.keyString(key)
	}
	k.base.events.Rec.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Key: ks, Wait: time.Duration(wait)})
}

// rejected records, if outcomes are recorded, the refusal err of the call with ctx (not
// nil) for the key named ks.
func (k *Limiter[K]) rejected(ctx context.Context, ks string, err error) {
	if l := k.base; l.events.Rec != nil {
		l.events.Rec.Record(ctx, observe.Outcome{Result: observe.ResultRejected, Key: ks, Err: err})
	}
}

// refuseCount publishes and records the refusal of the call with ctx for key (not yet
// bounded) for a number of permits that can never be granted (err is rate.check's), and
// returns err, as Limiter.refuseCount does, with the key; in shadow mode (r's), it lets
// the call through as refuse does, and returns nil.
func (k *Limiter[K]) refuseCount(ctx context.Context, key K, r *rlcore.Rate, err error) error {
	l := k.lim()
	if err == rlcore.ErrBadCount {
		return err
	}
	var now int64
	if l.events.Observed() {
		now = l.now()
	}
	return k.refuse(rlcore.OrBackground(ctx), k.bounded(key), r, now, 0, err)
}

// refuse publishes and records the refusal at now, with err, of the call with ctx for key
// (bounded) decided at the rate r, whose retry-after is retryAfter, and returns err; in
// shadow mode (r's), the call is let through instead: the refusal is counted and
// published as shadowed, the call recorded as admitted, and refuse returns nil.
func (k *Limiter[K]) refuse(ctx context.Context, key K, r *rlcore.Rate, now, retryAfter int64, err error) error {
	if r.Cfg.Shadow {
		k.shadowed(ctx, key, now, retryAfter, err)
		k.admitted(ctx, key, 0)
		return nil
	}
	k.reject(ctx, key, now, retryAfter, err)
	return err
}

// shadowed counts, and publishes as a ratelimit.EventRejected with the attribute shadow,
// the refusal err at now that the call with ctx for key (bounded) would have had without
// shadow mode; the caller lets the call through and records it.
func (k *Limiter[K]) shadowed(ctx context.Context, key K, now, retryAfter int64, err error) {
	l := k.base
	l.shadowRejected.Add(1)
	if l.events.Observed() && l.events.Wants(ctx, ratelimit.EventRejected) {
		var ks string
		if l.events.Listener != nil || l.events.Keys {
			ks = k.keyString(key)
		}
		l.events.PublishCtx(ctx, policy.Event{Kind: ratelimit.EventRejected, At: time.Duration(now),
			RetryAfter: time.Duration(max(retryAfter, 0)), Err: err, Key: ks,
			Attrs: policy.EventAttrs{contract.ShadowEvent}})
	}
}

// rejectContext publishes, records and returns the rejection of the call with ctx for key
// that its context ended after it arrived (see Limiter.rejectContext).
func (k *Limiter[K]) rejectContext(ctx context.Context, key K, now, wait int64, ctxErr error) error {
	err := k.base.rej.ForContext(ctxErr)
	k.reject(ctx, key, now, wait, err)
	return err
}
