package ratelimit

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// refuseCount publishes and records the refusal of the call with ctx for a number of
// permits that can never be granted (err is rate.check's), and returns err. n < 1 is not
// a decision: it is neither published nor recorded.
// In shadow mode (r's), such a call is let through: see refuse.
func (l *Limiter) refuseCount(ctx context.Context, r *rate, err error) error {
	if err == rlcore.ErrBadCount {
		return err
	}
	return l.refuse(ctx, r, l.eventTime(), 0, err)
}

// refuse publishes and records the refusal at now, with err, of the call with ctx decided
// by the rate r, whose retry-after is retryAfter, and returns err; in shadow mode (r's),
// the call is let through instead: the refusal is counted and published as shadowed, the
// call recorded as admitted, and refuse returns nil.
func (l *Limiter) refuse(ctx context.Context, r *rate, now, retryAfter int64, err error) error {
	if r.Cfg.Shadow {
		return l.letThrough(ctx, now, retryAfter, err)
	}
	l.reject(ctx, now, retryAfter, err)
	return err
}

// letThrough is refuse in shadow mode: the refusal shadowed, the call recorded as
// admitted; it returns nil.
func (l *Limiter) letThrough(ctx context.Context, now, retryAfter int64, err error) error {
	l.shadowed(ctx, now, retryAfter, err)
	l.admitted(rlcore.OrBackground(ctx), 0)
	return nil
}

// shadowed counts, and publishes as an EventRejected with the attribute shadow, the
// refusal err at now that the call with ctx would have had without shadow mode; the
// caller lets the call through and records it.
func (l *Limiter) shadowed(ctx context.Context, now, retryAfter int64, err error) {
	l.shadowRejected.Add(1)
	if l.events.Observed() {
		ctx = rlcore.OrBackground(ctx)
		if l.events.Wants(ctx, EventRejected) {
			l.events.PublishCtx(ctx, policy.Event{Kind: EventRejected, At: time.Duration(now),
				RetryAfter: time.Duration(max(retryAfter, 0)), Err: err,
				Attrs: policy.EventAttrs{contract.ShadowEvent}})
		}
	}
}

// refuseOnArrival is the rejection of a call whose context ctx is nil or already done when
// it arrives (err is decorate.ContextErr's): it matches ErrExceeded and err. Nothing is
// taken and no event is published; the rejection is recorded.
func (l *Limiter) refuseOnArrival(ctx context.Context, err error) error {
	rej := l.nilCtx
	if err != policy.ErrNilContext {
		rej = l.rej.ForContext(err)
	}
	l.rejected(ctx, rej)
	return rej
}

// rejectContext publishes, records and returns the rejection of the call with ctx that
// its context ended after it arrived: its deadline comes before the permit (wait is then
// the retry-after), or it ended during the wait.
func (l *Limiter) rejectContext(ctx context.Context, now, wait int64, ctxErr error) error {
	err := l.rej.ForContext(ctxErr)
	l.reject(ctx, now, wait, err)
	return err
}

// publishWaited publishes the wait, from now, of the call with ctx.
func (l *Limiter) publishWaited(ctx context.Context, now, wait int64) {
	if l.events.Observed() {
		l.events.PublishCtx(ctx, policy.Event{Kind: EventWaited,
			At: time.Duration(now), Wait: time.Duration(wait)})
	}
}

// reject publishes the refusal at now, with err, of the call with ctx, whose retry-after
// is retryAfter (≤ 0: none known), and records it.
func (l *Limiter) reject(ctx context.Context, now, retryAfter int64, err error) {
	if l.events.Observed() { // inlined: a limiter nobody observes makes no call here
		l.rejectObserved(ctx, now, retryAfter, err)
	}
}

// rejectObserved is reject with a listener or a recorder.
func (l *Limiter) rejectObserved(ctx context.Context, now, retryAfter int64, err error) {
	ctx = rlcore.OrBackground(ctx)
	if l.events.Wants(ctx, EventRejected) {
		l.events.PublishCtx(ctx, policy.Event{Kind: EventRejected,
			At: time.Duration(now), RetryAfter: time.Duration(max(retryAfter, 0)), Err: err})
	}
	l.rejected(ctx, err)
}

// admitted records, if outcomes are recorded, that the call with ctx was let through
// after waiting wait nanoseconds (0: it did not wait).
func (l *Limiter) admitted(ctx context.Context, wait int64) {
	if l.events.Rec != nil {
		l.events.Rec.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted, Wait: time.Duration(wait)})
	}
}

// rejected records, if outcomes are recorded, the refusal err of the call with ctx (nil:
// context.Background()).
func (l *Limiter) rejected(ctx context.Context, err error) {
	if l.events.Rec != nil {
		l.events.Rec.Record(rlcore.OrBackground(ctx), observe.Outcome{Result: observe.ResultRejected, Err: err})
	}
}
