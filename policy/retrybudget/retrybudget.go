// Package retrybudget is resilience4go's retry budget (layer retrybudget.Layer): the
// retries and hedges of every composition that shares one budget may be at most Ratio of
// the calls it saw over the last Window, and always at least MinPerSecond per second.
//
// Use it where retries could turn a dependency's trouble into a storm: with 3 attempts
// per call, a dependency that fails every call receives 3 times the traffic its callers
// offer, just when it can least take it. A budget caps that at 1 + Ratio times (1.2 times
// with the defaults), plus the floor, over its window, while a healthy dependency's rare
// failures are retried as before. It takes part in a registry's compositions: a budget is
// a layer of its own, and the composition's retry (or hedge) asks it before each extra
// attempt; one budget shared by Name counts the calls and extra attempts of every
// composition that names it:
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock,
//		resilience.Retry(), resilience.RetryBudget(retrybudget.Name("inventory")))
//
// A retry or hedge built with its package's New, outside a registry, has no budget: the
// registry is how a budget reaches them. NewPolicy decorates functions with a budget
// alone, which then counts their calls (for a budget that a registry's compositions
// share, say).
//
// Where the detail is:
//   - Budget: the rule, the window, and how a refusal ends a retry or skips a hedge;
//   - NewPolicy: how calls are counted;
//   - EventRefused, the event;
//   - New (the defaults), Config (every setting, and what a reload changes) and the
//     options.
package retrybudget

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/decimal"
	"github.com/resilience4go/resilience4go/policy/internal/window"
)

// The counters of a budget's window.
const (
	callsCounter  = 0 // the calls seen
	extrasCounter = 1 // the extra attempts allowed
)

// Budget is a retry budget. Let a registry build it (resilience.RetryBudget), or build
// it with New and count calls with NewPolicy. It is safe for concurrent use; one instance
// may serve any number of compositions, which then share it.
//
// The rule: an extra attempt (a retry, or a hedge) is allowed when the extra attempts
// allowed in the last Window are fewer than max(Ratio × calls, MinPerSecond × Window in
// seconds), the calls being those the budget saw in the window, the current one
// included. It is compared exactly, in whole numbers, with Ratio and MinPerSecond
// standing for the decimals written. Over any span shorter than Window − Window/20, then,
// a dependency behind a budget receives at most calls + max(⌈Ratio × calls⌉,
// ⌈MinPerSecond × Window in seconds⌉) attempts, the calls being those of the span (a span
// of a whole Window may hold two windows' allowance: see the window below). An allowed
// extra attempt is counted when it is allowed; one that is then not made (the caller's
// context ended during the retry's wait) is given back.
//
// The window is a fixed ring of 20 buckets on the budget's clock, each Window/20 wide
// (rounded down to the nanosecond, at least 1ns): a call or an extra attempt counts for
// more than Window − Window/20 and at most Window after it happened (for a Window that
// is a multiple of 20ns). Counting a call allocates nothing and takes the budget's lock
// once; so does asking for an extra attempt that is allowed.
//
// A refused extra attempt is not made. A retry ends the call at once with its last
// attempt's result and error, as they are, as when the wait before its next attempt
// would outlast the caller's deadline; a hedge skips the hedge, as when its own budget
// refuses it. The budget publishes EventRefused, with its own id and the asking layer's.
// A hedge asks its own budget first, then this one: both must allow a hedge, and a hedge
// this one refuses is not counted in the hedge's own.
//
// A disabled budget allows every extra attempt and counts nothing.
type Budget struct {
	// Read-only after New.
	events contract.Events
	clk    clock.Clock

	cur     atomic.Pointer[Config] // the configuration in force, replaced whole by reconfigure
	refused atomic.Int64           // the extra attempts refused since the budget was built

	mu    sync.Mutex      // guards what follows, and serializes reconfigure
	ratio decimal.Decimal // Ratio
	floor int64           // ⌈MinPerSecond × Window in seconds⌉
	w     *window.Window  // calls and extra attempts
	// carriedAt is the clock time at which w replaced the window of an earlier Window
	// (0 for the first): the events counted before it that w holds are counted at it,
	// those counted from kept on; those counted before kept are in no window.
	carriedAt, kept time.Duration
}

// New builds a retry budget from opts, over the defaults: Ratio 0.2, MinPerSecond 10,
// Window 10s, enabled (a budget of 20% of the calls, and at least 10 extra attempts per
// second, over 10s: Finagle's defaults). An invalid configuration returns a
// *policy.ConfigError: R4C-ATR-007 (Ratio outside [0, 1], MinPerSecond negative or not
// finite, Window zero) or R4C-ATR-004 (Window negative). The instance id is the Name,
// else "" (no id: its events name no instance).
func New(opts ...Option) (*Budget, error) { return contract.New(defaults, build, opts) }

// build builds a budget from s.
func build(s settings) (*Budget, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	b := &Budget{events: s.EventsOf(Layer, s.ID("")), clk: s.ClockOrSystem()}
	b.set(s.Config, 0)
	return b, nil
}

// set makes c the configuration in force at clock time now: a new window keeps the
// counts of the old one, as counted at now. b.mu must be held, but by build.
func (b *Budget) set(c Config, now time.Duration) {
	ratio, _ := decimal.Of(c.Ratio)
	perSecond, _ := decimal.Of(c.MinPerSecond)
	b.ratio = ratio
	b.floor = clampInt64(perSecond.Shift(-9).CeilMul(uint64(max(c.Window, 0))))
	if old := b.cur.Load(); old == nil || old.Window != c.Window {
		w := window.New(c.Window, 2)
		if b.w != nil {
			w.Add(now, callsCounter, b.w.Sum(now, callsCounter))
			w.Add(now, extrasCounter, b.w.Sum(now, extrasCounter))
			// What the old window still held moves to now: the events since its oldest
			// bucket, and those carried into it at carriedAt if that bucket is still in it.
			oldest := b.w.Oldest(now)
			if b.carriedAt < oldest {
				b.kept = oldest
			}
			b.carriedAt = now
		}
		b.w = w
	}
	b.cur.Store(&c)
}

// clampInt64 returns n, at most math.MaxInt64.
func clampInt64(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// arrive counts a call, unless the budget is disabled.
func (b *Budget) arrive() {
	if b.cur.Load().Disabled {
		return
	}
	now := b.clk.Now()
	b.mu.Lock()
	b.w.Add(now, callsCounter, 1)
	b.mu.Unlock()
}

// allows reports whether a window with calls calls and extras extra attempts in it
// allows one more: extras < max(Ratio × calls, the floor), exactly. b.mu must be held.
func (b *Budget) allows(calls, extras int64) bool {
	return extras < b.floor || b.ratio.Less(uint64(max(extras, 0)), uint64(max(calls, 0)))
}

// tryAttempt counts an extra attempt and returns the clock time it counted it at, when
// the window allows one more; otherwise it counts the refusal and publishes EventRefused
// with ctx, naming the layer by and its instance id. A disabled budget allows it and
// counts nothing (at -1).
func (b *Budget) tryAttempt(ctx context.Context, by policy.Layer, id string, attempt int) (time.Duration, bool) {
	if b.cur.Load().Disabled {
		return -1, true
	}
	now := b.clk.Now()
	b.mu.Lock()
	if b.allows(b.w.Sum(now, callsCounter), b.w.Sum(now, extrasCounter)) {
		b.w.Add(now, extrasCounter, 1)
		b.mu.Unlock()
		return now, true
	}
	b.mu.Unlock()
	b.refused.Add(1)
	if b.events.Wants(ctx, EventRefused) {
		b.events.PublishCtx(ctx, policy.Event{Kind: EventRefused, At: now, Attempt: attempt,
			Attrs: policy.EventAttrs{0: slog.String(attrLayer, string(by)), 1: slog.String(attrInstance, id)}})
	}
	return 0, false
}

// returnAttempt gives back an extra attempt counted at at (nothing for a negative at,
// one that was not counted). One counted before a reload changed the window is taken
// from where the new window holds it: at the time of the change, if the old window
// still held it then; else it is in no window, and nothing is taken.
func (b *Budget) returnAttempt(at time.Duration) {
	if at < 0 {
		return
	}
	b.mu.Lock()
	if at < b.carriedAt {
		if at < b.kept {
			b.mu.Unlock()
			return
		}
		at = b.carriedAt
	}
	b.w.Add(at, extrasCounter, -1)
	b.mu.Unlock()
}

// gate is a budget as the retry or hedge of its composition asks it: its
// contract.AttemptGate.
type gate Budget

// TryAttempt implements contract.AttemptGate.
func (g *gate) TryAttempt(ctx context.Context, by policy.Layer, id string, attempt int) (time.Duration, bool) {
	return (*Budget)(g).tryAttempt(ctx, by, id, attempt)
}

// ReturnAttempt implements contract.AttemptGate.
func (g *gate) ReturnAttempt(at time.Duration) { (*Budget)(g).returnAttempt(at) }
