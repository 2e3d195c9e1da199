package slots

import (
	"context"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
)

// TryAcquire lets a call of level p in if it fits under p's share of the limit now and
// nobody of its level or above waits (no barging), and starts its permit's clock if
// permits are timed. It records and publishes nothing.
func (s *Slots) TryAcquire(p policy.Priority) (Permit, bool) {
	if s.q.Ahead(p) {
		return Permit{}, false
	}
	ticket, n, ok := s.take(p)
	if !ok {
		return Permit{}, false
	}
	return s.permit(Permit{Ticket: ticket, InFlight: n}), true
}

// Acquire lets a call with ctx in, at the priority ctx carries, waiting on the caller's
// goroutine up to MaxWait, highest level first and in FIFO order within a level, whether
// s is enabled or not. It returns the call's permit (give its slot
// back with Complete or Release), or a rejection, which matches the policy's sentinel:
//   - at once, letting nothing in and publishing nothing, when ctx is nil or already done
//     (the rejection also matches ctx's error, or policy.ErrNilContext);
//   - at once, the plain rejection, when the call does not fit and MaxWait is 0;
//   - the plain rejection after MaxWait on the clock;
//   - the rejection matching ctx's error when ctx ends during the wait.
//
// In shadow mode (SetShadow), a call that does not fit at once is let through at once
// instead, holding no room: Acquire returns ErrShadow, and the call gives nothing back.
//
// A call that waited publishes the waited event, a rejection of a live ctx the rejection
// event, both with ctx. The outcome is recorded once with ctx: ResultAdmitted with the
// wait, or ResultRejected (also on arrival). It allocates nothing unless it has to wait.
func (s *Slots) Acquire(ctx context.Context) (Permit, error) {
	if err := decorate.ContextErr(ctx); err != nil {
		return Permit{}, s.sw.Refuse(ctx, err)
	}
	level := policy.PriorityFrom(ctx)
	if p, ok := s.TryAcquire(level); ok {
		s.sw.Admit(ctx)
		return p, nil
	}
	if s.shadow.Load() {
		s.shadowed(ctx, level)
		return Permit{}, ErrShadow
	}
	maxWait := s.MaxWait()
	if maxWait == 0 {
		s.full(ctx, level)
		return Permit{}, s.rej.Plain
	}
	p, err := s.sw.Wait(ctx, maxWait)
	if err != nil {
		return Permit{}, err
	}
	return s.permit(p), nil
}
