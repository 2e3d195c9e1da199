package main

import "fmt"

// The gRPC server under load (BenchmarkGRPCLoad): 32 callers on one loopback connection, a
// quota of 100 calls/s, so nearly every call is refused. Ours limits with one quota for
// the method, as the peer's one x/time/rate limiter does; keyed by peer (Limit's default)
// it is measured too, for the report's reader.
var (
	grpcLoadOurs     = subject{"resilience4go", "Limit (one quota), refused, 32 callers", "GRPCLoad/resilience4go/Limit/method/refused/32callers"}
	grpcLoadOursPeer = subject{"resilience4go", "Limit (per peer), refused, 32 callers", "GRPCLoad/resilience4go/Limit/peer/refused/32callers"}
	grpcLoadPeer     = subject{"go-grpc-middleware", "ratelimit + x/time/rate + RetryInfo, refused, 32 callers", "GRPCLoad/middleware/ratelimit/retryinfo/refused/32callers"}
)

func init() {
	peerModules = append(peerModules, struct{ path, short string }{"github.com/grpc-ecosystem/go-grpc-middleware/v2", "go-grpc-middleware"})
	why["grpc-load"] = "Both servers answer a refused call with ResourceExhausted and a RetryInfo detail; ours also " +
		"sends the grpc-retry-pushback-ms trailer and a message that names the quota and the wait, which vary " +
		"with the wait, so HPACK sends them as literals where the peer's constant message is indexed. Most of a " +
		"call's CPU is gRPC's own (HTTP/2 framing, HPACK, the client's stream), the same on both sides, so the " +
		"ratio sits near 1 and a busy machine moves it by more than the refusal costs; cpu-ns/op (the process's " +
		"CPU per call) is the steadier figure. Ours allocates the refusal, its message and the status (gRPC's " +
		"status.FromProto clones the proto it is given), and gRPC merges the shared pushback trailer into the " +
		"stream's own map. What would close it: a status that gRPC takes without cloning, which its API does not offer."
}

// checkGRPCTargets checks the gRPC load target at m's GOMAXPROCS: ours, limiting the method
// with one quota, at least the peer's throughput (the median of the rounds' ratios of
// ns/op, the inverse of the throughput).
func (r *results) checkGRPCTargets(m mode) []verdict {
	m.parallel = false // the benchmark runs its 32 callers itself, at each GOMAXPROCS: no Parallel twin
	o, p := r.figures(grpcLoadOurs, m), r.figures(grpcLoadPeer, m)
	ratio := r.ratio(grpcLoadPeer, grpcLoadOurs, m)
	met, short := atLeast(ratio, 1)
	measured := fmt.Sprintf("%s ns ÷ %s ns = %s× the throughput", num(p.ns), num(o.ns), ratioStr(ratio))
	if oc, _, ok := r.median(m.bench(grpcLoadOurs), m.procs, "cpu-ns/op"); ok {
		if pc, _, ok := r.median(m.bench(grpcLoadPeer), m.procs, "cpu-ns/op"); ok {
			measured += fmt.Sprintf("; CPU per call %s ns against %s ns", num(oc), num(pc))
		}
	}
	measured += fmt.Sprintf("; %s allocs/op (%s B) against %s (%s B)", qty(o.allocs), qty(o.bytes), qty(p.allocs), qty(p.bytes))
	return []verdict{{id: "grpc-load",
		target: "gRPC server, 32 callers, most calls refused with RetryInfo (ours also with the pushback trailer): " +
			"at least the throughput of go-grpc-middleware's ratelimit interceptor with x/time/rate attaching the same RetryInfo",
		mode: fmt.Sprintf("%d callers, GOMAXPROCS %d", 32, m.procs), ok: o.ok && p.ok, met: met, short: short,
		measured: measured, margin: overMargin(ratio, 1),
		spread: spreadNote(r, at{grpcLoadOurs, m}, at{grpcLoadOursPeer, m}, at{grpcLoadPeer, m})}}
}
