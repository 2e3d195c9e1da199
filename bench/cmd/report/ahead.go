package main

import (
	"fmt"
	"strings"
)

// aheadBy is how much cheaper a peer's call must be than ours, in the median of the
// rounds' ratios, for the report to say why: below it, the spread of the runs on a
// shared machine is as large as the difference.
const aheadBy = 1.05

// whyAhead says why a peer's call can cost less than ours, keyed by the peer's serial
// benchmark name: what it does that ours does not.
var whyAhead = map[string]string{
	uberTake.bench: "uber's Take waits for its permit, and its slack is 10 permits (10 ns at a billion a " +
		"second): under contention its arithmetic now and then puts a permit a few nanoseconds ahead, and " +
		"it sleeps until then. Such a sleep is rare in this loop, but it parks one goroutine and leaves the " +
		"other core to run calls alone, the shared word's cache line staying in its cache, which lowers the " +
		"mean cost of a call. Ours, with a burst of a billion permits here, finds every permit free and " +
		"takes it at once, with no lock (SPEC RL-1), so every admitted call of either goroutine moves the " +
		"TAT's cache line between the cores.",
	fsTry.bench: "failsafe-go's smooth limiter takes a sync.Mutex around its clock read and its update. A " +
		"goroutine that finds the mutex held spins, then parks, while the holder goes on with the line in " +
		"its cache: one core runs a streak of calls alone, and the mean cost of a call falls below that of " +
		"two cores taking turns on one word. SPEC RL-1 keeps a mutex off our hot path, so that no caller " +
		"waits for another's call, and RL-13 rules out parking one; the price is this contended figure " +
		"(see the reference row: a clock read and a compare-and-swap retried until it wins).",
	semaphoreTry.bench: "x/sync/semaphore takes a sync.Mutex to take a slot and again to give it back: " +
		"as with a mutex-guarded limiter, one core runs a streak of calls alone while the other waits. " +
		"Our bulkhead takes and gives back its slot with a compare-and-swap each on one shared word and no " +
		"lock, so each call moves that word's cache line between the cores twice.",
	fsBulkheadTry.bench: "failsafe-go's bulkhead is a buffered channel: a send takes a slot and a receive " +
		"gives it back, each under the channel's lock, with a mutex's effect: one core runs a streak alone. " +
		"Our bulkhead takes and gives back its slot with a compare-and-swap each on one shared word and no " +
		"lock.",
	redisRate.bench: "Both scripts read the server's clock (TIME), read the TAT and write it back when they admit. " +
		"Redis's own cost per call, in this run: {server}. Ours does more in its script: it keeps the rate with the TAT " +
		"(so that a change of rate converts the schedule), the freed slots of canceled reservations (for an " +
		"exact Cancel), and computes in exact nanoseconds as pairs of integers where redis_rate's uses a float " +
		"of seconds. With 2 goroutines, redis_rate also sends each caller's command at once on a connection of " +
		"its own, so their round trips overlap; ours keeps at most one script run per key in flight (SPEC " +
		"RL-22): a caller that comes while a run is in flight waits for it, then goes in the next, and with " +
		"many callers one run decides them all (see the target with 32 callers).",
}

// writePeersAhead writes, after the Ratios table, why a peer's call costs less than ours
// where one does by aheadBy or more, in any mode: the peer's mechanism, from whyAhead.
func (r *report) writePeersAhead(b *strings.Builder) {
	var lines []string
	for _, c := range comparisons {
		for _, peer := range c.peers {
			var where []string
			for _, m := range r.modes {
				if !r.res.figures(c.ours, m).ok || !r.res.figures(peer, m).ok {
					continue
				}
				if x := r.res.ratio(c.ours, peer, m); x >= aheadBy {
					where = append(where, fmt.Sprintf("%s: ours %s× slower", m, ratioStr(x)))
				}
			}
			if len(where) == 0 {
				continue
			}
			why, ok := whyAhead[peer.bench]
			if !ok {
				why = "No reason is recorded for this pair: compare the spread column of the medians, and the profiles."
			}
			if strings.Contains(why, "{server}") {
				why = strings.ReplaceAll(why, "{server}", r.serverCosts(c.ours, peer))
			}
			lines = append(lines, fmt.Sprintf("- **%s** against `%s` (%s): %s\n",
				peer.label(), c.ours.call, strings.Join(where, "; "), why))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Where a peer is faster\n\nWhere our call costs %s× a peer's or more (the median of the rounds' ratios), what the peer does that ours does not:\n\n", ratioStr(aheadBy))
	for _, l := range lines {
		b.WriteString(l)
	}
}

// serverCosts says what Redis spent per call of ours and of peer, in each mode where both
// were measured: its CPU time (server-cpu-ns/op) and its time in the script
// (script-ns/op), the medians of the runs.
func (r *report) serverCosts(ours, peer subject) string {
	var parts []string
	for _, m := range r.modes {
		oCPU, oScript, okO := r.serverPer(ours, m)
		pCPU, pScript, okP := r.serverPer(peer, m)
		if okO && okP {
			parts = append(parts, fmt.Sprintf("%s, %s µs of CPU for ours against %s µs, %s µs and %s µs of it in the scripts",
				m, num(oCPU/1e3), num(pCPU/1e3), num(oScript/1e3), num(pScript/1e3)))
		}
	}
	if len(parts) == 0 {
		return "(not measured)"
	}
	return strings.Join(parts, "; ")
}
