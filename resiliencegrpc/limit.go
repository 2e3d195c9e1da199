package resiliencegrpc

import (
	"context"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/resilience4go/resilience4go/internal/nilcheck"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// errRateLimited is the errors.Is target of a rate limiter's refusal,
// ratelimit.ErrExceeded: the error of a call that Limit refuses, what a serverError of a
// server limiter's refusal matches.
// This file is the one place of the package that knows the rate limiter.
var errRateLimited = ratelimit.ErrExceeded

// KeyedLimiter is what Limit needs of a per-key rate limiter. *keyed.Limiter[string]
// (package ratelimit/keyed) is one (with a backend such as ratelimit/redis, its quotas are shared by every
// replica of the server). Decide takes a permit for key without waiting and reports, for a
// refusal, RetryAfter: how long until the key's next permit. It is called concurrently,
// so it must be safe for concurrent use, with the call's context: its observer's recorder
// then sees the call's trace.
type KeyedLimiter interface {
	Decide(ctx context.Context, key string) keyed.Decision
}

// ByMethod keys calls by their full method name: one quota per method, shared by every
// client.
func ByMethod(_ context.Context, fullMethod string) string { return fullMethod }

// ByMetadata keys calls by the first value of the incoming metadata name (lowercase, as
// gRPC keeps metadata keys), e.g. "x-api-key"; a call without it, or with an empty value,
// is keyed by its peer (see Limit). Reading it costs one allocation per call (gRPC copies
// the values). The value is whatever the client sends: key by it only where a caller
// cannot pick another value at will (an API key that is checked before this interceptor, a
// tenant id set by a trusted gateway).
func ByMetadata(name string) func(ctx context.Context, fullMethod string) string {
	name = strings.ToLower(name)
	return func(ctx context.Context, _ string) string {
		if v := metadata.ValueFromIncomingContext(ctx, name); len(v) > 0 {
			return v[0]
		}
		return ""
	}
}

// Limit limits calls with k, keyed by key: Permits per Period per key, as k is built.
// methods names what it applies to: full method names ("/pkg.Service/Method"), whole
// services ("/pkg.Service/"), or, when none are given, every method.
//
// key returns the key of a call from its context (its peer and incoming metadata) and its
// full method name ("/pkg.Service/Method"), e.g. ByMethod or ByMetadata. It runs on every
// call that the Limit applies to, concurrently, so it must be quick and safe for
// concurrent use. Calls for which it returns the same string share one quota. A nil key,
// or a key that returns "" for a call, keys the call by its peer: the address of the
// call's connection, or, when it comes from one of the TrustedProxies, the client address
// read from the ForwardedMetadata; one key per network (IPv4Prefix, IPv6Prefix), written
// as the address ("192.0.2.1") for a full-length prefix and as the network in CIDR
// notation otherwise ("2001:db8:1:2::/64"). A peer that is not an IP address (a Unix
// socket, an in-memory listener such as bufconn) is keyed by its address's text, so all
// its clients share one key; a call without a peer has the key "". A returning client
// costs no allocation, but for a call through a trusted proxy: one, to read its
// metadata.
//
// Each call is limited by one Limit at most, the most specific that applies: one that
// names its method, else one that names its service, else one for every method, so that
// no call spends a permit of one quota and is then refused by another. Two Limits for the
// same method, service or for every method make NewServer fail with R4C-REG-010, as do a
// nil k and a malformed method name.
//
// A refused call does not reach the handler (nor a Guard): it ends with ResourceExhausted
// and a google.rpc.RetryInfo detail whose retry_delay is the exact time until the key's
// next permit, k's Decision.RetryAfter, with the same delay in the call's
// grpc-retry-pushback-ms trailer (in whole milliseconds, rounded up), which gRPC's own
// retries read; its message names the method, the quota and the wait, e.g.
// "resiliencegrpc: /pkg.Service/Method: rate limit of 10 per 1s exceeded; retry in 90ms"
// (the quota as k is configured, read from its Config method when it has one, as
// *keyed.Limiter has; else k's Decision.Limit). k's MaxWait is not used: a server
// answers at once. A Limit counts the calls that reach it: one that it admits and its Guard then
// turns away (a full bulkhead) has spent its permit, as a request the server received.
func Limit(k KeyedLimiter, key func(ctx context.Context, fullMethod string) string, methods ...string) ServerOption {
	kq, _ := k.(quotaTeller)
	return func(s *Server) { s.limits.add(s, &limitRule{k: k, kq: kq, key: key}, methods, nilcheck.Is(k)) }
}

type limitRule struct {
	k    KeyedLimiter
	kq   quotaTeller                                         // k, when it tells its quota's period; else nil
	key  func(ctx context.Context, fullMethod string) string // nil: by peer
	peer func(ctx context.Context) string                    // the key of a call by its peer
}

// quotaTeller is a KeyedLimiter that tells its quota, as *keyed.Limiter does.
type quotaTeller interface {
	Config() ratelimit.Config
}

// keyOf returns the key of a call: key's, or, when there is none or it returns "", its
// peer's.
func (l *limitRule) keyOf(ctx context.Context, method string) string {
	if l.key != nil {
		if k := l.key(ctx, method); k != "" {
			return k
		}
	}
	return l.peer(ctx)
}

// admit takes a permit for the call, or returns its refusal.
func (l *limitRule) admit(ctx context.Context, method string) error {
	d := l.k.Decide(ctx, l.keyOf(ctx, method))
	if d.Admitted {
		return nil
	}
	e := &policyError{err: errRateLimited, method: method, limited: true,
		limit: limitRefusal{permits: d.Limit, wait: max(d.RetryAfter, 0)}}
	if l.kq != nil { // the quota as configured, whatever share of it this replica holds
		cfg := l.kq.Config()
		e.limit.permits, e.limit.period = cfg.Permits, cfg.Period
	}
	return e
}

// limitRefusal is what the message of a Limit's refusal says besides the method: the
// quota (permits per period; a period of 0 when the limiter does not tell it, and no quota
// when it tells no permits either) and the time until the key's next permit.
type limitRefusal struct {
	permits int
	period  time.Duration
	wait    time.Duration
}

// message returns "resiliencegrpc: /pkg.Service/Method: rate limit of 10 per 1s exceeded;
// retry in 90ms", the wait rounded up to the millisecond, as the grpc-retry-pushback-ms
// trailer sends it.
func (r *limitRefusal) message(method string) string {
	var buf [160]byte // on the stack, as are the durations' texts: the message is the one allocation
	b := append(buf[:0], "resiliencegrpc: "...)
	b = append(b, method...)
	b = append(b, ": rate limit"...)
	if r.permits > 0 {
		b = append(b, " of "...)
		b = strconv.AppendInt(b, int64(r.permits), 10)
		if r.period > 0 {
			b = append(b, " per "...)
			b = append(b, r.period.String()...)
		}
	}
	b = append(b, " exceeded; retry in "...)
	b = append(b, pushbackDelay(r.wait).String()...)
	return string(b)
}
