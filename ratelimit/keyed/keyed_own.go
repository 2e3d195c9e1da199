package keyed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// Per-key limits: a key's cell may follow a rate of its own instead of the limiter's, given
// by the PerKey function when the cell is made or by SetLimit. The rate is kept in the
// cell's schedule (rlcore.Schedule.SetOwn), so that a key on the limiter's limit is no
// larger, and every call reads it from the cell it finds.

// PerKey sets the function that gives a key's limit, as text: "permits/period" pairs
// separated by commas, e.g. "100/1m" or "100/1m, 1000/24h", the first being the key's
// Permits per Period (its burst too) and the others further windows, as
// ratelimit.Windows reads them (at most 3). The function is called when the key's cell is
// made — at the key's first call, and again after its cell was evicted — never on calls
// that find the cell, and without any of the limiter's locks held (it may be called more
// than once for a key whose cell calls race to make). It is given the key as the limiter
// keeps it: a string key longer than the key bytes of Bounds as its digest. "" leaves the
// key on the limiter's limit (Permits, Period and Windows), as does a text that is not a
// limit the limiter can keep: the key's new cell then follows the limiter's limit, and a
// ratelimit.EventLimitRefused event carries the error (R4C-ATR-005 for a text that is not
// pairs, R4C-ATR-003, R4C-ATR-002 or R4C-REG-001 for a pair out of range, R4C-ATR-007 for
// more than 3 further windows, R4C-REG-010 for windows on a limiter built without any and
// without a backend). A key's own limit replaces Permits, Period and Windows; MaxWait,
// Disabled and Shadow stay the limiter's. The function must be safe for concurrent use.
// Default none: every key follows the limiter's limit. For a key type other than the
// limiter's, New fails with R4C-REG-010; a ratelimit.Limiter ignores it.
//
// A key on the limiter's limit costs what it costs without PerKey (about 72 bytes at the
// bound, see Bounds); a key with its own limit costs one more allocation of 48 bytes
// (about 120 bytes at the bound; the rate is shared by keys given the same text, for up
// to 256 texts).
func PerKey[K comparable](f func(key K) string) ratelimit.Option {
	return func(s *rlcore.Settings) {
		if f != nil {
			s.PerKey = f
		} else {
			s.PerKey = nil
		}
	}
}

// maxOwnRates bounds how many texts a limiter keeps the parsed rate of, shared by the
// keys given the same text; a key given another text has a rate of its own.
const maxOwnRates = 256

// ownRates is a limiter's parsed per-key rates, by their text.
type ownRates struct {
	mu sync.Mutex
	m  map[string]*rlcore.Rate
}

// perKeyOf returns the PerKey function of s for the key type K; an error for a function
// of another key type.
func perKeyOf[K comparable](s rlcore.Settings) (func(K) string, error) {
	if s.PerKey == nil {
		return nil, nil
	}
	f, ok := s.PerKey.(func(K) string)
	if !ok {
		var zero K
		return nil, r4c.Errorf(r4c.BadSpec, "rateLimiter.perKey", fmt.Sprintf("%T", s.PerKey),
			"keyed.PerKey must be given a func(%T) string for a Limiter of that key type", zero)
	}
	return f, nil
}

// rateOf parses the limit text for a key of this limiter, valid for it, and returns its
// rate, the one already parsed for the same text when there is one.
func (k *Limiter[K]) rateOf(text string) (*rlcore.Rate, error) {
	o := &k.own
	o.mu.Lock()
	r := o.m[text]
	o.mu.Unlock()
	if r != nil {
		return r, nil
	}
	b := k.base
	c, err := rlcore.ParseLimit(text, b.cur().Cfg)
	switch {
	case err != nil:
		return nil, err
	case c.Windows != "" && !k.windowed && k.backend == nil:
		return nil, errWindowsLater
	}
	r = newRate(b.events.ID, c)
	o.mu.Lock()
	if p := o.m[text]; p != nil {
		r = p
	} else if len(o.m) < maxOwnRates {
		if o.m == nil {
			o.m = make(map[string]*rlcore.Rate)
		}
		o.m[text] = r
	}
	o.mu.Unlock()
	return r, nil
}

// limitFor returns the rate that a new cell of key (bounded) follows: the one PerKey
// gives, or nil for the limiter's. A text that is not a limit publishes an
// ratelimit.EventLimitRefused event, with ctx, and leaves the limiter's.
func (k *Limiter[K]) limitFor(ctx context.Context, key K) *rlcore.Rate {
	if k.perKey == nil {
		return nil
	}
	text := k.perKey(key)
	if text == "" {
		return nil
	}
	r, err := k.rateOf(text)
	if err != nil {
		if l := k.base; l.events.Observed() {
			l.events.PublishCtx(ctx, policy.Event{Kind: ratelimit.EventLimitRefused, At: time.Duration(l.b.Now()), Err: err, Key: k.keyString(key)})
		}
		return nil
	}
	return r
}

// mayOwn reports whether some key may follow a rate of its own: PerKey was given, or
// SetLimit called. A call for more permits than the limiter's burst is then decided by
// the key's rate.
func (k *Limiter[K]) mayOwn() bool { return k.perKey != nil || k.owned.Load() }

// checkN returns the error of a call for n permits at the limiter's rate r that no key
// could be granted: n < 1, or more than r's burst when no key has a rate of its own (else
// the key's rate decides, see decision.over; a disabled limiter lets 1 to its burst pass,
// as ever).
func (k *Limiter[K]) checkN(r *rlcore.Rate, n int) error {
	if n > r.Limit && !r.Cfg.Disabled && k != nil && k.base != nil && k.mayOwn() {
		return nil
	}
	return r.Check(n)
}

// SetLimit gives key a limit of its own from its next call: limit is text as PerKey's
// function returns it ("100/1m", or "100/1m, 1000/24h" with further windows), or "" for
// the limiter's limit. What the key owes is kept, as Reconfigure keeps it for every key:
// counted in permits of the old rate and owed again at the new one, so that a raised
// limit gives the key's next permit within one new emission interval and a lowered one
// owes its spent permits at its slower rate; a key idle at the change admits its new
// burst at once. A key without a cell gets one, with the limit, taking a place as a new
// key does (see Bounds). Reservations of the key granted before the change give nothing
// back when canceled after it. The limit is kept with the key's cell: a cell evicted (at
// the bound, or by Sweep once idle) forgets it, and the key's next cell follows PerKey's
// function, if any, else the limiter's limit. A Reconfigure leaves a key with a limit of
// its own on it (it changes MaxWait, Disabled and Shadow for every key, as ever). An
// invalid limit returns a *policy.ConfigError and changes nothing: codes as PerKey's, and
// R4C-RLM-001 for a key not equal to itself; a zero Limiter, never built, R4C-REG-010.
// Safe for concurrent use.
func (k *Limiter[K]) SetLimit(key K, limit string) error {
	if k == nil || k.base == nil {
		return rlcore.ErrZero
	}
	if k.check != keysEqual && !k.usable(key) {
		return r4c.Errorf(codeBadKey, "key", k.keyString(key),
			"a key must be equal to itself (a NaN is not, nor a value holding one) and comparable")
	}
	var r *rlcore.Rate
	if limit != "" {
		var err error
		if r, err = k.rateOf(limit); err != nil {
			return err
		}
	}
	k.owned.Store(true)
	key = k.bounded(key)
	h := k.hash(key)
	s := k.shardOf(h)
	if _, made := k.lockedCell(context.Background(), s, key, h, r); !made {
		k.replace(s, key, h, r)
	}
	s.mu.Unlock()
	return nil
}

// replace gives key (bounded, hash h, held in s) a new cell that follows r (nil: the
// limiter's rate), carrying what its old cell owed, converted to r; the old one is marked
// dead, so that a call that found it looks the key up again. Called with s.mu held.
func (k *Limiter[K]) replace(s *keyedShard[K], key K, h uint64, r *rlcore.Rate) {
	t, i := s.slotOf(key, h)
	old := t.slots[i].e.Load()
	def := k.base.cur()
	from, to := old.slots.RateOr(def), r
	if to == nil {
		to = def
	}
	if from == to && old.slots.Own() == (r != nil) {
		return
	}
	var rc *remoteCell
	if k.backend != nil {
		rc = k.remoteOf(&old.cell)
	}
	e := k.newEntry(old.key, r, rc)
	var tat int64
	if m := k.multiOf(&old.cell); m != nil {
		tat = m.KillInto(&old.slots, k.multiOf(&e.cell))
		k.multiOf(&e.cell).Move(to)
	} else {
		tat = old.slots.KillTAT()
	}
	e.slots.TAT.Store(tat)
	if from.Interval != to.Interval || from.Cfg.Permits != to.Cfg.Permits {
		e.slots.Convert(k.base.now(), from, to, true)
	}
	t.slots[i].e.Store(e)
}
