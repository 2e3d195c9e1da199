package main

import (
	"fmt"
	"math"
	"strings"
)

// The calls set against the best peer on each path other than the single limiter's: the
// keyed limiter, the circuit breaker, futures, the HTTP middleware, the Redis backend, the
// bulkhead and retry.
var (
	keyedHot       = subject{"resilience4go", "Keyed.TryAcquire, one hot key", "Keyed/resilience4go/TryAcquire/hotkey"}
	keyedLive      = subject{"resilience4go", "Keyed.TryAcquire, 100k live keys", "Keyed/resilience4go/TryAcquire/live100k"}
	keyedIdle      = subject{"resilience4go", "Keyed.TryAcquire, 100k idle keys", "Keyed/resilience4go/TryAcquire/idle100k"}
	goLimiterHot   = subject{"sethvargo/go-limiter", "Take, one hot key", "Keyed/go-limiter/Take/hotkey"}
	goLimiterLive  = subject{"sethvargo/go-limiter", "Take, 100k live keys", "Keyed/go-limiter/Take/live100k"}
	goLimiterIdle  = subject{"sethvargo/go-limiter", "Take, 100k idle keys", "Keyed/go-limiter/Take/idle100k"}
	ululeHot       = subject{"ulule/limiter", "Get, one hot key", "Keyed/ulule/Get/hotkey"}
	breakerOurs    = subject{"resilience4go", "DecorateFunc, closed, success", "Breaker/resilience4go/DecorateFunc/closed/success"}
	breakerWrap    = subject{"resilience4go", "Wrap1, closed, success", "Breaker/resilience4go/Wrap1/breaker/closed/success"}
	breakerFS      = subject{"failsafe-go", "TryAcquirePermit + RecordSuccess", "Breaker/failsafe/TryAcquirePermit+RecordSuccess/closed/success"}
	breakerGob     = subject{"sony/gobreaker", "Execute, closed, success", "Breaker/gobreaker/Execute/closed/success"}
	asyncGo        = subject{"resilience4go", "async.Go + Await", "Async/resilience4go/Go+Await"}
	asyncWrap      = subject{"resilience4go", "WrapAsync + async.Go + Await", "Async/resilience4go/WrapAsync/ratelimiter/Go+Await"}
	asyncChan      = subject{"Go", "a goroutine and a channel", "Async/goroutine/chan"}
	asyncChanRL    = subject{"Go", "the limiter's Acquire, then a goroutine and a channel", "Async/goroutine/chan/ratelimiter"}
	mwRejected     = subject{"resilience4go", "Middleware, rejected (429)", "Middleware/resilience4go/Middleware/rejected"}
	mwAdmitted     = subject{"resilience4go", "Middleware, admitted", "Middleware/resilience4go/Middleware/admitted"}
	httprateRej    = subject{"go-chi/httprate", "LimitByIP, rejected (429)", "Middleware/httprate/LimitByIP/rejected"}
	httprateAdm    = subject{"go-chi/httprate", "LimitByIP, admitted", "Middleware/httprate/LimitByIP/admitted"}
	redisOurs      = subject{"resilience4go", "TryAcquire on Redis", "Redis/resilience4go/TryAcquire/admitted"}
	redisRate      = subject{"go-redis/redis_rate", "Allow", "Redis/redis_rate/Allow/admitted"}
	redisOurs32    = subject{"resilience4go", "TryAcquire on Redis, 32 callers", "RedisCallers/resilience4go/TryAcquire/admitted/32callers"}
	redisRate32    = subject{"go-redis/redis_rate", "Allow, 32 callers", "RedisCallers/redis_rate/Allow/admitted/32callers"}
	bulkheadOurs   = subject{"resilience4go", "a call guarded by bulkhead.NewPolicy", "Bulkhead/resilience4go/NewPolicy/admitted"}
	semaphoreTry   = subject{"x/sync/semaphore", "TryAcquire + Release", "Bulkhead/semaphore/TryAcquire/admitted"}
	fsBulkheadTry  = subject{"failsafe-go", "TryAcquirePermit + ReleasePermit", "Bulkhead/failsafe/TryAcquirePermit/admitted"}
	retryOurs      = subject{"resilience4go", "Wrap1 with retry, success", "Retry/resilience4go/Wrap1/success"}
	retryOursAgain = subject{"resilience4go", "Wrap1 with retry, 2 retries", "Retry/resilience4go/Wrap1/retried"}
	retryGo        = subject{"avast/retry-go", "DoWithData, success", "Retry/retry-go/DoWithData/success"}
	retryGoAgain   = subject{"avast/retry-go", "DoWithData, 2 retries", "Retry/retry-go/DoWithData/retried"}
	backoffRetry   = subject{"cenkalti/backoff", "Retry, success", "Retry/backoff/Retry/success"}
	backoffAgain   = subject{"cenkalti/backoff", "Retry, 2 retries", "Retry/backoff/Retry/retried"}
)

func init() {
	comparisons = append(comparisons,
		comparison{"Keyed limiter, one hot key", keyedHot, []subject{goLimiterHot, ululeHot}, nil},
		comparison{"Keyed limiter, 100k live keys", keyedLive, []subject{goLimiterLive}, nil},
		comparison{"Keyed limiter, 100k keys idle between visits", keyedIdle, []subject{goLimiterIdle}, nil},
		comparison{"Circuit breaker, closed, a successful call", breakerOurs, []subject{breakerFS, breakerGob}, nil},
		comparison{"Circuit breaker, closed, a successful call through Wrap1", breakerWrap, []subject{breakerFS, breakerGob}, nil},
		comparison{"A future: a goroutine's result, awaited", asyncGo, []subject{asyncChan}, nil},
		comparison{"A future through WrapAsync with a rate limiter", asyncWrap, []subject{asyncChanRL}, nil},
		comparison{"HTTP middleware, rejected with 429", mwRejected, []subject{httprateRej}, nil},
		comparison{"HTTP middleware, admitted", mwAdmitted, []subject{httprateAdm}, nil},
		comparison{"Redis backend, admitted", redisOurs, []subject{redisRate}, nil},
		comparison{"Bulkhead, a slot taken and given back", bulkheadOurs, []subject{semaphoreTry, fsBulkheadTry}, nil},
		comparison{"Retry, a call that succeeds at once", retryOurs, []subject{retryGo, backoffRetry}, nil},
		comparison{"Retry, a call that succeeds on its third attempt", retryOursAgain, []subject{retryGoAgain, backoffAgain}, nil},
	)
	peerModules = append(peerModules, []struct{ path, short string }{
		{"github.com/sethvargo/go-limiter", "go-limiter"},
		{"github.com/ulule/limiter/v3", "ulule/limiter"},
		{"github.com/go-chi/httprate", "httprate"},
		{"github.com/sony/gobreaker/v2", "gobreaker"},
		{"golang.org/x/sync", "x/sync"},
		{"github.com/avast/retry-go/v4", "retry-go"},
		{"github.com/cenkalti/backoff/v5", "backoff"},
		{"github.com/go-redis/redis_rate/v10", "redis_rate"},
		{"github.com/redis/go-redis/v9", "go-redis"},
	}...)
}

// A peerTarget is "ours costs at most limit× the peer's ns/op", or, with faster set, "ours
// is at least limit× faster", and, with allocs, "ours allocates no more than the peer"
// (or no more than maxAllocs when it is set).
type peerTarget struct {
	id, what   string
	ours, peer subject
	limit      float64
	faster     bool
	allocs     bool
	maxAllocs  float64 // with allocs: an absolute bound instead of the peer's count
	serialOnly bool
	callers    int // the benchmarks run this many goroutines themselves, at each GOMAXPROCS: no Parallel twin
}

var peerTargets = []peerTarget{
	{id: "keyed", what: "Keyed limiter, one hot key: no slower than go-limiter's memorystore, no more allocations", ours: keyedHot, peer: goLimiterHot, limit: 1, allocs: true},
	{id: "keyed", what: "Keyed limiter, 100k live keys: no slower than go-limiter's memorystore, no more allocations", ours: keyedLive, peer: goLimiterLive, limit: 1, allocs: true},
	{id: "keyed", what: "Keyed limiter, 100k keys idle between visits: no slower than go-limiter's memorystore, no more allocations", ours: keyedIdle, peer: goLimiterIdle, limit: 1, allocs: true},
	{id: "breaker", what: "Circuit breaker, closed, success: no slower than failsafe-go's breaker called directly, no more allocations", ours: breakerOurs, peer: breakerFS, limit: 1, allocs: true},
	{id: "async", what: "async.Go + Await: no slower than a goroutine and a channel, no more allocations", ours: asyncGo, peer: asyncChan, limit: 1, allocs: true},
	{id: "async-wrap", what: "WrapAsync (rate limiter) around async.Go + Await: no slower than the same limiter's Acquire, then a goroutine and a channel, no more allocations", ours: asyncWrap, peer: asyncChanRL, limit: 1, allocs: true},
	{id: "middleware", what: "Middleware, rejected with 429 and its headers: no slower than go-chi/httprate, at most 3 allocations", ours: mwRejected, peer: httprateRej, limit: 1, allocs: true, maxAllocs: 3},
	{id: "redis", what: "Redis backend, one caller: no more allocations than redis_rate", ours: redisOurs, peer: redisRate, allocs: true, serialOnly: true},
	{id: "redis32", what: "Redis backend, 32 callers on one key: at least 3× redis_rate's throughput", ours: redisOurs32, peer: redisRate32, limit: 3, faster: true, callers: 32},
}

// checkPeerTargets checks the peer targets in mode m.
func (r *results) checkPeerTargets(m mode) []verdict {
	var vs []verdict
	for _, t := range peerTargets {
		if t.serialOnly && m.parallel {
			continue
		}
		label := m.String()
		if t.callers > 0 {
			label = fmt.Sprintf("%d callers, GOMAXPROCS %d", t.callers, m.procs)
			m.parallel = false // the benchmark has no Parallel twin: it is run at each GOMAXPROCS
		}
		o, p := r.figures(t.ours, m), r.figures(t.peer, m)
		v := verdict{id: t.id, target: t.what, mode: label, ok: o.ok && p.ok,
			spread: spreadNote(r, at{t.ours, m}, at{t.peer, m})}
		var measured []string
		met, short, margin := true, "", ""
		if t.limit > 0 {
			if t.faster {
				ratio := r.ratio(t.peer, t.ours, m)
				met, short = atLeast(ratio, t.limit)
				margin = overMargin(ratio, t.limit)
				measured = append(measured, fmt.Sprintf("%s ns ÷ %s ns = %s× faster", num(p.ns), num(o.ns), ratioStr(ratio)))
			} else {
				ratio := r.ratio(t.ours, t.peer, m)
				met, short = atMost(ratio, t.limit)
				margin = underMargin(ratio, t.limit)
				measured = append(measured, fmt.Sprintf("%s ns ÷ %s ns = %s×", num(o.ns), num(p.ns), ratioStr(ratio)))
			}
		}
		if t.allocs {
			bound, against := p.allocs, "the peer's"
			if t.maxAllocs > 0 {
				bound, against = t.maxAllocs, "the bound"
			}
			measured = append(measured, fmt.Sprintf("%s allocs/op (%s B) against %s %s (peer: %s allocs, %s B)",
				qty(o.allocs), qty(o.bytes), against, qty(bound), qty(p.allocs), qty(p.bytes)))
			if o.allocs > bound {
				met = false
				short = joinNotes(short, fmt.Sprintf("%s allocs/op instead of at most %s", qty(o.allocs), qty(bound)))
			} else if t.limit == 0 {
				margin = fmt.Sprintf("%s allocs under", qty(bound-o.allocs))
			}
		}
		v.met, v.short, v.margin = met, short, margin
		v.measured = strings.Join(measured, "; ")
		vs = append(vs, v)
	}
	return vs
}

// ratio returns a's ns/op over b's in mode m. When both were run the same number of times
// (interleaved rounds, one sample per round) it is the median over rounds of each round's
// ratio, so that a burst of other work that slowed one round counts once; otherwise the
// ratio of the medians.
func (r *results) ratio(a, b subject, m mode) float64 {
	as := r.samples[key{m.bench(a), m.procs}]["ns/op"]
	bs := r.samples[key{m.bench(b), m.procs}]["ns/op"]
	if len(as) == 0 || len(bs) == 0 {
		return math.NaN()
	}
	if len(as) != len(bs) {
		return median(as) / median(bs)
	}
	ratios := make([]float64, len(as))
	for i := range as {
		ratios[i] = as[i] / bs[i]
	}
	return median(ratios)
}

// underMargin says how far got is under limit (or over it); overMargin how far got is
// above limit (or short of it); exactMargin is the margin of a target met or missed
// exactly (a count of allocations).
func underMargin(got, limit float64) string {
	if math.IsNaN(got) {
		return "–"
	}
	if got <= limit {
		return fmt.Sprintf("%.0f%% under the limit", (1-got/limit)*100)
	}
	return fmt.Sprintf("%.0f%% over", (got/limit-1)*100)
}

func overMargin(got, limit float64) string {
	if math.IsNaN(got) {
		return "–"
	}
	if got >= limit {
		return fmt.Sprintf("%.0f%% above the limit", (got/limit-1)*100)
	}
	return fmt.Sprintf("%.0f%% short", (1-got/limit)*100)
}

func exactMargin(met bool) string {
	if met {
		return "exact"
	}
	return "–"
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func init() {
	why["keyed"] = "A keyed decision finds the key's cell in its shard's index without a lock (a hash of " +
		"the key and a probe) and runs GCRA on it (one clock read, one compare-and-swap); go-limiter's Take " +
		"is a read lock on one map, a probe and a mutex on the key's bucket. With 100k keys both wait mostly " +
		"on cache misses; on one hot key with 2 goroutines every call of ours writes one shared cache line " +
		"(the key's TAT), go-limiter's two (its map's reader count and the bucket's mutex). What would close " +
		"a gap: fewer checks before the decision."
	why["breaker"] = "The closed success path takes a permit (one load of the state word) and records the " +
		"success in the sliding window; failsafe-go's breaker does the same under its mutex. What would close " +
		"it: fewer shared writes per recorded outcome."
	why["async"] = "A future is one allocation with its state and a goroutine; the peer is a goroutine and a " +
		"buffered channel. Both cost mostly the goroutine's start and the scheduler's hand-off, so the ratio is " +
		"near 1 and noise decides the sign. What would close it: nothing in the future; a quieter machine."
	why["async-wrap"] = "Both sides take a permit from a limiter configured alike (a clock read, {clock} here, and " +
		"a compare-and-swap on its TAT) and then run the function on a goroutine of its own: ours decides the " +
		"permit in the rate limiter's async decorator (one indirect call, the rate loaded once, no allocation) " +
		"and starts async.Go, whose future holds the goroutine's state in one allocation; the peer calls Acquire " +
		"and then starts a goroutine that sends on a buffered channel (two allocations besides the goroutine). " +
		"Both cost mostly the goroutine's start and the scheduler's hand-off (park and ready: on the future's " +
		"WaitGroup for ours, on the channel for the peer), so the ratio sits near 1 and noise on a shared " +
		"machine decides the sign in a round. What would close it: nothing left in the composition; a cheaper " +
		"hand-off than the runtime's park and ready."
	why["middleware"] = "A 429 writes its status, a Retry-After header and the RateLimit headers; the values " +
		"are formatted once per retry-after second and reused. What would close it: fewer header writes."
	why["redis"] = "Ours boxes a rate's script arguments once and reads the reply into one []int64; what a call " +
		"allocates beyond that is the client's (go-redis: the command, its reply's slice, the connection's " +
		"health check) and the call's own timeout context. What would close it: a timeout that needs no " +
		"context of its own per call."
	why["redis32"] = "Concurrent decisions on one key go to Redis together, one script run at a time (SPEC " +
		"RL-22); redis_rate sends one round trip per call, on as many connections as calls in flight, so Redis " +
		"is seldom idle and answers several of them in one pass of its event loop. In this run, {perrun}. A run " +
		"is serial: our process writes the command and parks; Redis wakes, reads it, runs the script and writes " +
		"the reply; our process wakes and answers its callers, while Redis waits. A call's share is that run's " +
		"cost over the callers it decided. What would close it: a run that costs less on each side: a shorter " +
		"script, and fewer system calls and wake-ups (Redis's CPU outside the script, above)."
}

// peerHeadline gives, for each peer target measured in mode m, ours ÷ peer (or, for a
// throughput target, how many times faster) and our allocations.
func (r *report) peerHeadline(m mode) []string {
	var parts []string
	for _, t := range peerTargets {
		o, p := r.res.figures(t.ours, m), r.res.figures(t.peer, m)
		if !o.ok || !p.ok {
			continue
		}
		var fig string
		switch {
		case t.faster:
			fig = fmt.Sprintf("%s× the throughput of %s", ratioStr(r.res.ratio(t.peer, t.ours, m)), t.peer.lib)
		case t.limit > 0:
			fig = fmt.Sprintf("%s× %s", ratioStr(r.res.ratio(t.ours, t.peer, m)), t.peer.lib)
		default:
			fig = fmt.Sprintf("against %s", t.peer.lib)
		}
		parts = append(parts, fmt.Sprintf("%s %s, %s allocs/op (theirs %s)", t.ours.call, fig, qty(o.allocs), qty(p.allocs)))
	}
	return parts
}
