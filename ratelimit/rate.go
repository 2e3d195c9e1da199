package ratelimit

import (
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// rate is a limiter's configuration in force, with what its calls derive from it
// (rlcore.Rate), and how it takes permits. It is immutable: Reconfigure replaces it whole,
// so that a call, which loads it once, never sees half of one configuration and half of
// another.
type rate struct {
	rlcore.Rate
	direct bool // enabled and in-process: the methods run GCRA on the schedule themselves
	other  mode // how a limiter that is not direct takes permits; nil when direct
}

// newRate derives the rate of c, valid, for l.
func (l *Limiter) newRate(c rlcore.Config) *rate {
	r := new(rate)
	r.Init(c, func(limit int) error { return newBurstError(l.events.ID, limit) })
	switch {
	case c.Disabled:
		r.other = disabled{}
	case l.store != nil:
		r.other = backed{}
	case r.NMore > 0:
		r.other = windowed{}
	default:
		r.direct = true
	}
	return r
}

// check returns the error of a call for n permits that can never be granted: n < 1, or
// more than Permits (a zero Limiter's calls are refused by its mode).
func (r *rate) check(n int) error {
	if r.other == (unbuilt{}) && n >= 1 {
		return nil
	}
	return r.Check(n)
}

// Reconfigure changes the limiter's Permits, Period, MaxWait, Disabled and Shadow to c's, from
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
// A change of Windows keeps the state of each window it keeps (the same permits and
// period) and starts each new one with its full burst; reservations granted before it give
// nothing back when canceled after it. A call that read the old configuration just before
// it is decided by the windows in force after it. A change publishes a ConfigChanged event naming
// the changed settings ("enabled", "maxWait", "period", "permits", "shadow", "windows"); a c equal to the configuration in force changes and
// publishes nothing. A limiter with a backend keeps it. Its in-process schedule, used
// while the store answers Local, is converted as above; the store is given the new
// configuration with each call, and converts its own state at the first call that brings
// the new rate, as above (the Redis store does, in the same round trip; see its package
// for the precision and for instances configured differently). Reservations the store
// granted before that conversion give nothing back when canceled after it. Safe for
// concurrent use with every other method; concurrent calls to Reconfigure take effect one
// after the other.
func (l *Limiter) Reconfigure(c Config) error {
	return l.base.Reconfigure("Limiter", rlcore.Config(c), &l.mu, &l.events,
		func() *rlcore.Rate { return &l.rate.Load().Rate },
		func(old *rlcore.Rate, c rlcore.Config) {
			nr := l.newRate(c)
			l.base.ConvertAll(old, &nr.Rate, rlcore.LocalShare(l.shares), false, func(yield func(*rlcore.Schedule)) { yield(&l.slots) })
			if old.Cfg.Windows != c.Windows {
				l.more.Change(&l.base, &nr.Rate)
			}
			l.rate.Store(nr)
		})
}
