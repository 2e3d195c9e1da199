package ratelimit

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
)

// rate is a limiter's configuration in force, with what its calls derive from it. It is
// immutable: Reconfigure replaces it whole, so that a call, which loads it once, never
// sees half of one configuration and half of another.
type rate struct {
	cfg      Config
	interval int64 // T, the emission interval in ns (RL-2)
	tau      int64 // (Permits-1)·T: how far the TAT may run ahead of now with a permit free now
	maxWait  int64
	direct   bool                 // enabled and in-process: the methods run GCRA on the schedule themselves
	other    mode                 // how a limiter that is not direct takes permits; nil when direct
	burst    *BurstError          // the refusal of a call for more than Permits permits
	shared   atomic.Pointer[rate] // localShare's rate, made at its first use
}

// newRate derives the rate of c, valid, for l.
func (l *Limiter) newRate(c Config) *rate {
	t := int64(c.EmissionInterval())
	r := &rate{
		cfg:      c,
		interval: t,
		tau:      sat.Mul(int64(c.Permits-1), t),
		maxWait:  int64(c.MaxWait),
		burst:    newBurstError(l.events.ID, c.Permits),
	}
	switch {
	case c.Disabled:
		r.other = disabled{}
	case l.store != nil:
		r.other = backed{}
	default:
		r.direct = true
	}
	return r
}

// localShare returns the rate at which a limiter with a backend decides in-process when
// its store answers Local: r itself for share ≤ 1, else 1/share of r (see LocalSharer):
// one permit every share·T, with a burst of Permits/share, at least 1.
func (r *rate) localShare(share int) *rate {
	if share <= 1 {
		return r
	}
	if p := r.shared.Load(); p != nil {
		return p
	}
	b := max(r.cfg.Permits/share, 1)
	t := sat.Mul(int64(share), r.interval)
	c := r.cfg
	c.Permits, c.Period = b, time.Duration(sat.Mul(int64(b), t))
	p := &rate{cfg: c, interval: t, tau: sat.Mul(int64(b-1), t), maxWait: r.maxWait, direct: r.direct,
		other: r.other, burst: r.burst}
	r.shared.CompareAndSwap(nil, p)
	return r.shared.Load()
}

// weight returns, for a call for n permits (1..Permits), the stretch of the schedule it
// takes, inc = n·T, and its tolerance, tol = (Permits-n)·T: the call waits
// max(TAT, now) - now - tol.
func (r *rate) weight(n int) (inc, tol int64) {
	if n == 1 {
		return r.interval, r.tau
	}
	if n > r.cfg.Permits {
		// A local share's call for more than its burst: it passes on a full bucket, and the
		// bucket owes the rest (tolerance 0: never negative, so no wait can overflow).
		return sat.Mul(int64(n), r.interval), 0
	}
	return sat.Mul(int64(n), r.interval), sat.Mul(int64(r.cfg.Permits-n), r.interval)
}

// check returns the error of a call for n permits that can never be granted: n < 1, or
// more than Permits.
func (r *rate) check(n int) error {
	switch {
	case n < 1:
		return errBadCount
	case n > r.cfg.Permits && r.other != (unbuilt{}):
		return r.burst
	}
	return nil
}

// ErrExceedsBurst is the errors.Is target of the refusal of a call for more permits than
// the limiter's Permits (its burst): such a call can never be granted, however long it
// waits. It does not match ErrExceeded, and it carries no retry-after. It is itself a
// *BurstError (with no instance id and no Permits), so that the bare sentinel is a
// policy.Rejection as every refusal is.
var ErrExceedsBurst error = &BurstError{msg: "ratelimit: more permits than the burst"}

// BurstError is a limiter's refusal of a call for more permits than its Permits. It
// matches ErrExceedsBurst. Each limiter makes it once for each configuration, so
// returning it allocates nothing. Nothing is reserved.
type BurstError struct {
	instance string
	permits  int
	msg      string
}

func newBurstError(instance string, permits int) *BurstError {
	return &BurstError{instance: instance, permits: permits,
		msg: "ratelimit: a call for more than the " + strconv.Itoa(permits) + " permits of " + quote(instance) +
			" (its burst) can never be granted"}
}

// Error returns `ratelimit: a call for more than the <Permits> permits of "<instance>"
// (its burst) can never be granted`.
func (e *BurstError) Error() string { return e.msg }

// InstanceID returns the id of the limiter that refused the call.
func (e *BurstError) InstanceID() string { return e.instance }

// Permits returns the limiter's Permits when it refused the call: the most one call can
// take.
func (e *BurstError) Permits() int { return e.permits }

// Is reports whether target is ErrExceedsBurst.
func (e *BurstError) Is(target error) bool { return target == ErrExceedsBurst }

// RejectedBy returns the layer that refused the call: ratelimit.Layer.
func (e *BurstError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the call asks for more than the limiter's
// quota.
func (e *BurstError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns false: no wait lets the call through.
func (e *BurstError) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*BurstError)(nil)

// errBadCount is the error of a call for fewer than 1 permit.
var errBadCount = r4c.Errorf(r4c.BadPermits, "n", "",
	"a call must take at least 1 permit")

// Reconfigure changes the limiter's Permits, Period, MaxWait and Disabled to c's, from
// the next call; c is validated as New validates a configuration, and an invalid c
// returns its *policy.ConfigError (R4C-ATR-003, R4C-ATR-002, R4C-REG-001, R4C-ATR-004)
// and changes nothing. A zero Limiter, never built, cannot be reconfigured (R4C-REG-010).
//
// Calls read the configuration once, whole: each is decided by the old one or the new
// one, never by a mix. When Permits or Period changes, what the limiter owes is owed
// again at the new rate, as a token bucket keeps its tokens when its rate changes: the
// stretch of the schedule that permits already granted still hold is counted in permits
// of the old rate (fractions included), and that many permits of the new rate are owed.
// So a raised quota takes effect at once: 1 permit per hour, spent a second ago, then
// raised to 10 per second, gives its next permit within 100ms (one new emission interval
// T), not an hour later; and a lowered one owes its spent permits at its own, slower,
// rate. The change frees at once no more permits than were free at its instant (and at
// most the new Permits): a raised quota refills the difference at the new rate. Slots that
// canceled reservations gave back count as free, and do not outlive the change.
//
// Reservations already granted keep their turn: their Delay does not change, and a call
// waiting for its permit wakes when it was told. What they owe counts at the new rate too,
// so a new call waits one new T for each permit still reserved ahead of it. A reservation
// granted before the change and canceled after it gives nothing back (its slot was
// converted with the rest of the schedule). A change of MaxWait or Disabled alone, or one
// to or from a disabled limiter, moves nothing.
//
// The bound across a change at clock time c: any window [t, t+d] that contains c admits
// at most old Permits + (c−t)/old T + (t+d−c)/new T permits (rounded down), plus twice
// the permits of reservations granted before c and still waiting at it: once for their
// own, which keep the time the old configuration gave them, and once for permits free at
// c in slots canceled ahead of them. Windows before c keep the old configuration's bound,
// windows after it the new one's (Permits + d/T), plus the permits in them of those
// reservations. Several changes in a window add up the same way, each stretch at its own
// T, the first at the Permits in force at t. What a lowered
// quota cannot do: permits already granted stay granted, so just after a change to fewer
// Permits a window can still hold the old burst. A call that read the old configuration
// just before the change and takes its permit just after is decided by the old rate on
// the converted schedule.
//
// A change publishes a ConfigChanged event naming the changed settings ("enabled",
// "maxWait", "period", "permits"); a c equal to the configuration in force changes and
// publishes nothing. A limiter with a Backend keeps it. Its in-process schedule, used
// while the store answers Local, is converted as above; the store is given the new
// configuration with each call, and converts its own state at the first call that brings
// the new rate, as above (the Redis store does, in the same round trip; see its package
// for the precision and for instances configured differently). Reservations the store
// granted before that conversion give nothing back when canceled after it. Safe for
// concurrent use with every other method; concurrent calls to Reconfigure take effect one
// after the other.
func (l *Limiter) Reconfigure(c Config) error {
	return l.reconfigure(c, l.share, false, func(yield func(*slots)) { yield(&l.slots) })
}

// reconfigure is Reconfigure; each yields the schedules to convert to the new rate, at
// share and with idleStays (see convertAll): l's own, or every key's cell of a Keyed
// limiter.
func (l *Limiter) reconfigure(c Config, share int, idleStays bool, each func(func(*slots))) error {
	if !l.built() {
		return r4c.Errorf(r4c.BadSpec, "rateLimiter", "",
			"a zero Limiter, never built with New, has no configuration to change")
	}
	// Every field of c is given: a 0 is a wrong value, not one never set.
	if err := c.validate(given{permits: true, period: true}); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.rate.Load()
	if old.cfg == c {
		return nil
	}
	nr := l.newRate(c)
	l.convertAll(old, nr, share, idleStays, each)
	l.rate.Store(nr)
	if l.events.Observed() {
		l.events.Publish(policy.Event{Kind: policy.ConfigChanged, At: l.clk.Now(), Changed: changed(old.cfg, c)})
	}
	return nil
}

// changed names, sorted, the settings that differ between a and b, by their
// configuration attribute names.
func changed(a, b Config) []string {
	var c kind.Changes
	c.Add(a.Disabled != b.Disabled, "enabled")
	c.Add(a.MaxWait != b.MaxWait, "maxWait")
	c.Add(a.Period != b.Period, "period")
	c.Add(a.Permits != b.Permits, "permits")
	return c.Sorted()
}
