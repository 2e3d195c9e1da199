package ratelimit

import (
	"context"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// windowed is the mode of an enabled in-process limiter with further windows (Window): a
// call takes from its schedule and from every window together, under one lock
// (rlcore.Multi), all or none, and a refusal's retry-after is the longest wait among
// them. A limiter without windows never comes here: its calls run GCRA on the schedule
// themselves.
type windowed struct{}

// takeAll reserves n permits within maxWait for a call at now from the schedule and every
// window of r.
func (l *Limiter) takeAll(r *rate, n int, now, maxWait int64) (rlcore.Reservation, int64, bool) {
	ep := l.base.Epoch.Load()
	res, wait, ok := l.more.Take(&l.slots, &r.Rate, n, now, maxWait)
	res.Base, res.Epoch = &l.base, ep
	return res, wait, ok
}

func (windowed) tryAcquire(l *Limiter, r *rate, n int) error {
	ctx := context.Background()
	now := l.now()
	if _, wait, ok := l.takeAll(r, n, now, 0); !ok {
		return l.refuse(ctx, r, now, wait, l.rej.Plain)
	}
	l.admitted(ctx, 0)
	return nil
}

func (w windowed) acquire(ctx context.Context, l *Limiter, r *rate, n int) error {
	if err := decorate.ContextErr(ctx); err != nil {
		return l.refuseOnArrival(ctx, err)
	}
	res, err := w.reserve(ctx, l, r, n)
	if err != nil {
		return err
	}
	if res.Delay == 0 {
		l.admitted(ctx, 0)
		return nil
	}
	return l.waitFor(ctx, res)
}

// reserve takes n permits within MaxWait and, when ctx has a deadline, before it, as the
// in-process limiter's reserveCtx does; a delay is published as EventWaited.
func (windowed) reserve(ctx context.Context, l *Limiter, r *rate, n int) (rlcore.Reservation, error) {
	limit, byDeadline := rlcore.WaitLimit(ctx, r.MaxWait)
	now := l.now()
	res, wait, ok := l.takeAll(r, n, now, limit)
	switch {
	case ok:
		return res, l.delayed(ctx, r, now, &res)
	case rlcore.AfterDeadline(wait, limit, byDeadline, r.MaxWait):
		return l.refuseReserve(ctx, r, now, wait, l.rej.ForContext(context.DeadlineExceeded))
	}
	return l.refuseReserve(ctx, r, now, wait, l.rej.Plain)
}

func (windowed) available(l *Limiter, r *rate) int {
	return l.more.Available(&l.slots, &r.Rate, l.now())
}
