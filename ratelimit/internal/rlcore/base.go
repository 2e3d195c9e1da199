package rlcore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Base is what a limiter's schedules and reservations share: its clock, and the lock and
// count of the conversions of its schedules to a changed rate.
type Base struct {
	System bool        // Clk is clock.System(): read it without an interface call
	Clk    clock.Clock // nil for a limiter never built
	// Conv is held to convert the schedules to a new rate, and read-held by a Cancel that
	// gives back a slot: no slot of the old schedule comes back into the new one. Epoch
	// counts the conversions: a reservation granted before one gives nothing back.
	Conv  sync.RWMutex
	Epoch atomic.Uint32
}

// SetClock sets the clock, which must not be nil.
func (b *Base) SetClock(c clock.Clock) { b.Clk, b.System = c, sysclock.Is(c) }

// Now reads the clock once.
func (b *Base) Now() int64 {
	if b.System {
		return int64(sysclock.Now())
	}
	return int64(b.Clk.Now())
}

// LocalShare returns the share of b's stores' Local verdict now: b.LocalShare(), at least
// 1; 1 for a nil b (no backend). It is read at each decision in-process of a limiter with a
// backend, since a backend's share may change while it runs.
func LocalShare(b backend.Backend) int {
	if b == nil {
		return 1
	}
	return max(b.LocalShare(), 1)
}

// StoreListener returns the listener a backend's stores publish a limiter's events
// through: its listener, and its recorder, which gets them with context.Background() (no
// call of the limiter's causes them where the store publishes them). nil when nobody
// listens or records.
func StoreListener(ev *contract.Events) policy.Listener {
	lis, rec := ev.Listener, ev.Rec
	if rec == nil {
		return lis
	}
	return func(e policy.Event) {
		if lis != nil {
			lis(e)
		}
		rec.Event(context.Background(), e)
	}
}

// OrBackground returns ctx, or context.Background() for a nil ctx: what a recorder is
// given for a call that came without a context.
func OrBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
