// Package throttle is resilience4go's client-side adaptive throttle (layer
// throttle.Layer), after the Google SRE book's "Handling Overload": over a sliding
// window, the client counts the calls it attempted (requests) and those the backend
// accepted (accepts), and rejects a new call locally, before it is sent, with the
// probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// capped at MaxRejection. While the backend accepts the calls, requests ≤ K·accepts and
// nothing is rejected; when it refuses more than 1 − 1/K of the calls (half, for the
// default K of 2), the calls sent settle at about K times the accepts, and the refusals
// it spends its capacity on stay a fraction of the calls. Calls rejected
// locally count as requests too, so the throttle leans on harder while the backend
// refuses, and lets go as soon as it accepts again.
//
// Use it in front of a backend that refuses calls when overloaded (HTTP 429 or 503, a
// gRPC RESOURCE_EXHAUSTED, a remote rate limiter or breaker), from clients that together
// could overwhelm it: each client sheds its own excess locally, where a refusal costs
// nothing. Build a throttle with New and guard a function with NewPolicy, or let a
// registry build it, composed with other policies, with resilience.Wrap:
//
//	t, err := throttle.New(throttle.RefusedOn(ErrTooManyRequests))
//	get := throttle.NewPolicy[Stock](t).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock, resilience.Throttle())
//
// Where the detail is:
//   - Throttle: how calls are counted and rejected;
//   - NewPolicy: how a call goes, synchronous or returning a future, and what a
//     recorder is told;
//   - ErrThrottled, the rejections, and their retry-after; EventRejected, the event;
//   - New (the defaults), Config (every setting, and what a reload changes) and the
//     options; Layer, its place in the default order.
package throttle

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/window"
)

// The counters of the window.
const (
	requests = 0 // the calls attempted, rejected locally or not
	accepts  = 1 // the calls the backend accepted
)

// Throttle rejects calls locally while the backend refuses them. Build it with New and
// guard calls with NewPolicy (a registry builds its own for resilience.Throttle). It is
// safe for concurrent use; its configuration can change while it runs (a registry's
// reload, see Config).
//
// A call that arrives is rejected with the rejection probability of the window then (see
// Config.K), and a rejected call is counted as a request at once. An admitted call is
// counted when its outcome is known, in the bucket of the time it was admitted: as a
// request, and as an accept too when the backend accepted it (see NewPolicy for what
// counts); a call whose error IgnoreOn lists is not counted at all. So calls in flight
// count for nothing: a burst of calls into an empty window is not throttled while it
// waits for its answers. A call whose outcome comes after its bucket has left the window
// (it took longer than about a Window) counts for nothing either.
//
// The window is a ring of 20 time buckets under one mutex. Within one bucket's time the
// probability changes only when a call is counted, so each count (and each look at the
// window) works it out under the mutex and, when it is 0, publishes that in one atomic
// word with the bucket it holds for. A call arriving in that bucket reads the clock and
// that word, and is admitted without taking the mutex; otherwise it takes the mutex,
// and draws a random number only while the probability is above 0. Counting its outcome
// takes the mutex once, without reading the clock. Neither allocates.
type Throttle struct {
	// Read-only after New.
	events    contract.Events
	clk       clock.Clock
	refusedIf *contract.Predicate
	rej       *rejection // the rejection of every call the throttle refuses

	cur atomic.Pointer[rules] // the configuration in force, replaced whole by reconfigure
	// clear is 1 + the index of the window's newest bucket when the window, as counted,
	// gives the probability 0 under the rules in force; 0 when it does not, or is not
	// known. It is written under mu, after every change of the window's counts or
	// buckets; a call in that bucket reads it to be admitted without mu.
	clear atomic.Int64

	mu     sync.Mutex     // guards win, latest and rnd, and serializes reconfigure
	win    *window.Window // requests and accepts; replaced when Window changes
	latest int64          // the index of win's newest bucket, as the times given to it make it
	rnd    *rand.Rand     // nil: math/rand/v2's top-level functions
}

// rules is a configuration in force, with what calls read of it.
type rules struct {
	cfg   Config
	cls   contract.Classifier // RefusedOn, IgnoreOn and RefusedIf
	width int64               // the window's bucket width, in ns
}

// index returns the index of the window's bucket of time now, for buckets of width ns.
func index(now time.Duration, width int64) int64 { return max(int64(now), 0) / width }

// New builds a throttle from opts, over the defaults: K 2, Window 1m, MaxRejection 0.9,
// every error a refusal, Enabled true. An invalid configuration returns a
// *policy.ConfigError: R4C-ATR-007 (K below 1 or not finite, MaxRejection outside (0, 1],
// Window 0), R4C-ATR-004 (Window negative). The instance id is the Name, else "" (no id:
// its errors and events name no instance).
func New(opts ...Option) (*Throttle, error) { return contract.New(defaults, build, opts) }

// build builds a throttle from s.
func build(s settings) (*Throttle, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	id := s.ID("")
	t := &Throttle{events: s.EventsOf(Layer, id), clk: s.ClockOrSystem(), refusedIf: s.refusedIf,
		win: window.New(s.Window, 2)}
	t.clear.Store(1) // an empty window, whose newest bucket is index 0
	t.rej = newRejection(id, t)
	if s.rand != nil {
		t.rnd = rand.New(s.rand)
	}
	t.cur.Store(t.rulesOf(s.Config))
	return t, nil
}

// rulesOf returns c as the rules in force, with lists of its own, for t's window.
func (t *Throttle) rulesOf(c Config) *rules {
	contract.Own(&c.RefusedOn, &c.IgnoreOn)
	return &rules{cfg: c, cls: contract.Classifier{Include: c.RefusedOn, Exclude: c.IgnoreOn, If: t.refusedIf},
		width: int64(t.win.Width())}
}

// Config returns the configuration in force: the one the throttle was built with, or the
// last one a registry's reload applied. Its lists are copies.
func (t *Throttle) Config() Config {
	c := t.cur.Load().cfg
	contract.Own(&c.RefusedOn, &c.IgnoreOn)
	return c
}

// probability returns the rejection probability of a window holding r requests and a
// accepts under c.
func probability(c *Config, r, a int64) float64 {
	fr := float64(r)
	excess := fr - c.K*float64(a)
	if excess <= 0 {
		return 0
	}
	return min(excess/(fr+1), c.MaxRejection)
}

// settle moves the window to now and returns its requests and accepts and the
// probability they give under the configuration in force, publishing in clear whether it
// is 0. t.mu must be held (so that the configuration does not change meanwhile).
func (t *Throttle) settle(now time.Duration) (r, a int64, p float64) {
	t.latest = max(t.latest, index(now, int64(t.win.Width())))
	r, a = t.win.Sum(now, requests), t.win.Sum(now, accepts)
	p = probability(&t.cur.Load().cfg, r, a)
	if p == 0 {
		t.clear.Store(t.latest + 1)
	} else {
		t.clear.Store(0)
	}
	return r, a, p
}

// admit decides on a call arriving at now under r: it reports whether the call is
// admitted, with the rejection probability it was given; a rejected call is counted as
// a request at once, an admitted one when its outcome is known (count).
func (t *Throttle) admit(r *rules, now time.Duration) (bool, float64) {
	if t.clear.Load() == index(now, r.width)+1 {
		return true, 0
	}
	t.mu.Lock()
	_, _, p := t.settle(now)
	if p == 0 {
		t.mu.Unlock()
		return true, 0
	}
	var u float64
	if t.rnd != nil {
		u = t.rnd.Float64()
	} else {
		u = rand.Float64()
	}
	if u < p {
		t.win.Add(now, requests, 1) // p only grows: clear stays 0
	}
	t.mu.Unlock()
	return u >= p, p
}

// count counts an admitted call whose outcome is known, in the bucket of at, the time it
// was admitted: a request, and an accept when the backend accepted it. A call admitted
// before the window's oldest bucket counts for nothing.
func (t *Throttle) count(accepted bool, at time.Duration) {
	t.mu.Lock()
	t.win.Add(at, requests, 1)
	if accepted {
		t.win.Add(at, accepts, 1)
	}
	t.settle(at)
	t.mu.Unlock()
}

// retryIn returns how long from now until the window, with no further call, would admit
// every call: until enough of its oldest buckets have left it that requests ≤ K·accepts.
// At most one window.
func (t *Throttle) retryIn() time.Duration {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.cur.Load().cfg
	r, a, _ := t.settle(now)
	for j := 0; probability(c, r, a) > 0 && j < window.Buckets; j++ {
		br, leaves := t.win.Bucket(now, j, requests)
		ba, _ := t.win.Bucket(now, j, accepts)
		r, a = r-br, a-ba
		if probability(c, r, a) == 0 {
			return leaves
		}
	}
	return 0
}

// reconfigure applies c to the running throttle, for a registry's reload. c is validated
// as New validates it: an invalid c returns the same *policy.ConfigError and changes
// nothing. K, MaxRejection, the lists and Enabled apply from the next call; a new Window
// replaces the window with an empty one. When c differs from the configuration in force
// (by its attributes; the lists, set in code, are not compared), a ConfigChanged event is
// published, whose Changed lists the attributes that changed, sorted. It is safe for
// concurrent use, with calls and with other reconfigures. The event listener must not
// reload the registry.
func (t *Throttle) reconfigure(c Config) error {
	t.mu.Lock()
	old := t.cur.Load().cfg
	changed, err := changes(old, c)
	if err != nil {
		t.mu.Unlock()
		return err
	}
	// clear is 0 before the new rules are in force: a call that reads them then finds no
	// word worked out under the old ones.
	t.clear.Store(0)
	if c.Window != old.Window {
		t.win, t.latest = window.New(c.Window, 2), 0
	}
	t.cur.Store(t.rulesOf(c))
	if len(changed) > 0 {
		t.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: changed})
	}
	t.mu.Unlock()
	return nil
}

// checkReconfigure reports the error reconfigure would return for c, without applying
// it. Safe for concurrent use.
func (t *Throttle) checkReconfigure(c Config) error {
	return contract.ErrOf(changes(t.cur.Load().cfg, c))
}

// changes validates c as a new configuration for a throttle running with old, and
// returns the attribute names of the settings that change, sorted.
func changes(old, c Config) ([]string, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return contract.ChangedAttrs(attrs, &settings{Config: old}, &settings{Config: c}), nil
}
