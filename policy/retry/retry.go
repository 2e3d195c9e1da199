// Package retry is resilience4go's retry policy: a call that fails is attempted again,
// after a delay, up to MaxAttempts attempts in all.
//
// Use it for failures that pass: a dropped connection, a dependency that restarts or is
// briefly overloaded, a server that answers 503 with a Retry-After. Each attempt goes
// through every inner layer again (its own rate-limiter permit, its own timeout), and an
// open circuit breaker's rejection ends the retries at once. Retry only calls that are
// safe to send twice. Build a retry with New and guard a function with NewPolicy, or let
// a registry build it, composed with other policies, with resilience.Wrap:
//
//	r, err := retry.New(retry.MaxAttempts(4), retry.Multiplier(2))
//	get := retry.NewPolicy[Stock](r).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock, resilience.Retry())
//
// With the defaults (3 attempts, Delay 500ms, Multiplier 1, no cap, no jitter) a call
// that keeps failing is attempted at 0, 500ms and 1s. When the retry gives up, the last
// attempt's error is returned as is: there is no error of its own.
//
// Where the detail is:
//   - NewPolicy: which errors are retried, when the retry gives up and what it
//     returns, and what a recorder is told;
//   - Config: the wait between attempts (Delay, Multiplier, MaxDelay, Jitter, a server's
//     Retry-After) and waiting for a rate limiter's permit (WaitForPermit);
//   - EventAttempt, EventExhausted and EventAborted: the events;
//   - Retry: changing the configuration of a running retry.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// Retry is a retry policy. Build it with New, and retry calls with NewPolicy (a registry
// builds its own for resilience.Retry). It is safe for concurrent use and holds no
// per-call state: one instance may serve any number of functions and goroutines. Its
// configuration can change while it runs (a registry's reload): each call reads it once,
// when it starts, and keeps it to its end.
//
// A reload of a registry's configuration replaces MaxAttempts, Delay, Multiplier,
// MaxDelay, Jitter, WaitForPermit and Disabled for the calls that start after it; a call
// in progress keeps the configuration it started with, whole, until it ends. The error
// lists, which only code sets, cannot change on a running retry.
type Retry struct {
	*core // nil for a Retry not built by New, which makes every call a single attempt
	// src says whose rate-limiter rejections set the wait, for a retry returned by
	// permitsFrom; bound is false for the retry New returns, which honours every one.
	src   contract.PermitSource
	bound bool
	// gate, for a retry returned by limitedBy, is asked before each retry; nil: none.
	gate contract.AttemptGate
}

// core is what a retry and the retries permitsFrom returns for it share.
type core struct {
	cfg    atomic.Pointer[Config] // the configuration in force; reconfigure replaces it whole
	cls    contract.Classifier    // the error lists and If's predicate: fixed when it is built
	clk    clock.Clock
	events contract.Events
	rnd    *rand.Rand // nil: math/rand/v2's global source
	mu     sync.Mutex // serialises reconfigure
}

// sourceMu serialises every use of a caller's random source: a source is not safe for
// concurrent use, and the same one may be given to several retries (one option applied
// to many wrapped functions).
var sourceMu sync.Mutex

// New builds a retry from opts, over the defaults (3 attempts, 500ms apart). An invalid
// configuration returns a *policy.ConfigError: R4C-ATR-007 (maxAttempts < 1,
// multiplier < 1 or not finite, jitter outside [0, 1]) or R4C-ATR-004 (negative delay or
// maxDelay). The instance id is the Name, else "" (no id: its errors and events name no instance).
func New(opts ...Option) (*Retry, error) { return contract.New(defaults, build, opts) }

func build(s settings) (*Retry, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	contract.Own(&s.RetryOn, &s.AbortOn)
	c := &core{
		cls:    contract.Classifier{Include: s.RetryOn, Exclude: s.AbortOn, If: s.retryIf},
		clk:    s.ClockOrSystem(),
		events: s.EventsOf(Layer, s.ID("")),
	}
	cfg := s.Config
	c.cfg.Store(&cfg)
	if s.rand != nil {
		c.rnd = rand.New(s.rand)
	}
	return &Retry{core: c}, nil
}

// built reports whether r was built by New (or comes from permitsFrom on one that was).
func (r *Retry) built() bool { return r != nil && r.core != nil }

// instanceID returns the retry's id, which names it in its events; "" for a Retry not
// built by New. A registry reads it through the descriptor.
func (r *Retry) instanceID() string {
	if !r.built() {
		return ""
	}
	return r.events.ID
}

// Config returns the retry's configuration in force: the one New resolved, or the last
// one a registry's reload applied, with copies of its error lists: changing them changes
// nothing (the retry keeps copies of the lists it was built with). A Retry not built by
// New returns the zero Config.
func (r *Retry) Config() Config {
	if !r.built() {
		return Config{}
	}
	c := *r.cfg.Load()
	contract.Own(&c.RetryOn, &c.AbortOn)
	return c
}

// retryable reports whether the outcome (v, err) is retried: by the lists, or by pred,
// If's predicate for T (nil: none).
func retryable[T any](r *Retry, pred func(T, error) bool, v T, err error) bool {
	return contract.Counts(&r.cls, pred, v, err) && !neverRetried(err)
}

func neverRetried(err error) bool {
	if err == nil {
		return false
	}
	nr, ok := errors.AsType[policy.NeverRetried](err)
	return ok && nr.NeverRetried()
}

// wait returns the wait after failed attempt n of a call configured by c: the backoff,
// jittered.
func (r *Retry) wait(c *Config, n int) time.Duration {
	d := c.backoff(n)
	j := c.Jitter
	if j == 0 || d == 0 {
		return d
	}
	var u float64 // uniform in [0, 1)
	if r.rnd != nil {
		sourceMu.Lock()
		u = r.rnd.Float64()
		sourceMu.Unlock()
	} else {
		u = rand.Float64()
	}
	return jittered(d, j, u)
}

// jittered returns the wait d with jitter j for u, a draw uniform in [0, 1):
// d·(1-j+2j·u), uniform in d·(1±j). It saturates: never negative, never past the
// largest Duration, and 0 for a factor that is not a number.
func jittered(d time.Duration, j, u float64) time.Duration {
	return sat.Scale(d, 1-j+2*j*u)
}

// decision is what the retry does after failed attempt n.
type decision int

const (
	giveUp  decision = iota // return the error as is
	stop                    // the context ended: return the error joined with the context's
	retryIt                 // wait, then attempt again
)

// decide returns what to do after attempt n ended with (v, err), an outcome that is not
// a success, for a call configured by c whose context is ctx, and the error to return
// when it is not retryIt. It publishes the event of the end, with ctx: EventAborted for
// an outcome that is not retried or a context that has ended, EventExhausted for
// attempts spent on an outcome that would have been retried (none for a result If
// retries, returned with its nil error); then it records the call's outcome
// (ResultAborted, ResultFailed).
func decide[T any](r *Retry, c *Config, pred func(T, error) bool, ctx context.Context, n int, v T, err error) (decision, error) {
	switch outcome(r, c, pred, n, v, err) {
	case EventAborted:
		r.publish(ctx, EventAborted, n, 0, err)
		r.record(ctx, observe.ResultAborted, n, err)
		return giveUp, err
	case EventExhausted:
		if err != nil {
			r.publish(ctx, EventExhausted, n, 0, err)
		}
		r.record(ctx, observe.ResultFailed, n, err)
		return giveUp, err
	}
	if cerr := ctx.Err(); cerr != nil {
		err = stopped(err, cerr)
		r.publish(ctx, EventAborted, n, 0, err)
		r.record(ctx, observe.ResultAborted, n, err)
		return stop, err
	}
	return retryIt, nil
}

// outcome classifies attempt n's outcome (v, err), which is not a success, for a call
// configured by c, contexts aside: EventAborted when it is not retried (whatever the attempt), EventExhausted when
// it would be but the attempts are spent, and EventAttempt when it is retried.
func outcome[T any](r *Retry, c *Config, pred func(T, error) bool, n int, v T, err error) policy.EventKind {
	switch {
	case !retryable(r, pred, v, err):
		return EventAborted
	case n >= c.MaxAttempts:
		return EventExhausted
	}
	return EventAttempt
}

// stopped returns the error of a call whose retries ended with its context: it matches
// both last (the last attempt's error, nil for an outcome that If retried) and
// ctxErr. A last error that already matches ctxErr (the attempt saw the context end) is
// returned as is.
func stopped(last, ctxErr error) error {
	if last == nil {
		return ctxErr
	}
	if errors.Is(last, ctxErr) {
		return last
	}
	return fmt.Errorf("%w (retries stopped: %w)", last, ctxErr)
}

// admit reports whether the next attempt, attempt next of the call whose context is ctx,
// may be made after a wait of w: not when the wait would end after ctx's deadline, nor
// when the retry's gate refuses it (the gate publishes its refusal). It returns when the
// gate counted it, for giveBack.
func (r *Retry) admit(ctx context.Context, w time.Duration, next int) (time.Duration, bool) {
	if outlasts(ctx, w) {
		return 0, false
	}
	if r.gate == nil {
		return 0, true
	}
	return r.gate.TryAttempt(ctx, Layer, r.events.ID, next)
}

// giveBack gives the gate back the attempt it counted at at, which was not made.
func (r *Retry) giveBack(at time.Duration) {
	if r.gate != nil {
		r.gate.ReturnAttempt(at)
	}
}

// outlasts reports whether a wait of w, started now, ends after ctx's deadline. The time
// left is read on the real clock, whatever the retry's clock is.
func outlasts(ctx context.Context, w time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < w
}

// publish publishes an event of kind k of the call whose context is ctx.
func (r *Retry) publish(ctx context.Context, k policy.EventKind, attempt int, wait time.Duration, err error) {
	r.events.PublishCtx(ctx, policy.Event{Kind: k, Wait: wait, Err: err, Attempt: attempt})
}

// record tells the recorder, if any, the outcome of the call whose context is ctx: res
// after attempts attempts, ending with err.
func (r *Retry) record(ctx context.Context, res observe.Result, attempts int, err error) {
	if r.events.Rec != nil {
		r.events.Rec.Record(ctx, observe.Outcome{Result: res, Attempts: attempts, Err: err})
	}
}
