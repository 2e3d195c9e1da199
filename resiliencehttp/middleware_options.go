package resiliencehttp

import (
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"
)

// MiddlewareOption configures NewMiddleware, which applies the options in order and skips
// nil ones.
type MiddlewareOption func(*middleware)

// KeyFunc keys requests by fn(r) instead of by client IP: an API key, a user id, a
// tenant. Requests for which fn returns the same string share one quota; a request for
// which it returns "" is keyed by its client IP, as without KeyFunc (found with
// TrustedProxies, ForwardedHeader, IPv4Prefix and IPv6Prefix; see NewMiddleware), so that
// fn can key by an API key where there is one and fall back on the client elsewhere.
// Default none: every request is keyed by its client IP; a nil fn keeps that default. fn
// runs on every request that is not exempt, concurrently, so it must be quick and safe
// for concurrent use; a string cut from the request (a header's value) costs no
// allocation, and keyed.Limiter copies it when it first stores it.
func KeyFunc(fn func(r *http.Request) string) MiddlewareOption {
	return func(m *middleware) { m.keyFunc = fn }
}

// TrustedProxies names the reverse proxies in front of the server, by address prefix
// (e.g. netip.MustParsePrefix("10.0.0.0/8")). Only a request whose connection comes from
// one of them has its client IP read from the forwarding header (ForwardedHeader): the
// header is walked from the nearest hop outwards, over the trusted proxies, to the first
// address that is not one — the client as the last trusted proxy saw it. An entry that is
// not an address ("unknown", an obfuscated identifier) ends the walk at the hop that wrote
// it. Addresses are compared in the canonical form NewMiddleware describes: an IPv4-mapped
// prefix (::ffff:10.0.0.0/104) is the IPv4 one (10.0.0.0/8), and zones are dropped.
// Default none: forwarding headers are ignored, since any client can send them. Several
// calls add prefixes; an invalid prefix (the zero netip.Prefix, or what a failed
// netip.ParsePrefix returned) fails NewMiddleware with R4C-REG-010.
func TrustedProxies(prefixes ...netip.Prefix) MiddlewareOption {
	return func(m *middleware) {
		for _, p := range prefixes {
			m.ips.Trust(p)
		}
	}
}

// ForwardedHeader names the header that the trusted proxies write: "X-Forwarded-For" or
// "Forwarded" (RFC 7239, its for= parameters). Default "X-Forwarded-For"; "" keeps it.
// Only one is read, because a client can send the other with any content. Any other name
// is read as a comma-separated list of addresses, as X-Forwarded-For. It is read only
// from the proxies named by TrustedProxies.
func ForwardedHeader(name string) MiddlewareOption {
	return func(m *middleware) { m.ips.setHeader(name) }
}

// Exempt lets requests for these paths through without limit: an exact path
// ("/healthz"), or, ending in "/", every path under it ("/static/"). Paths are compared
// with the request's URL.Path cleaned of dot segments and repeated slashes (path.Clean),
// so "/static/../api" is not exempt. Default none. Several calls add paths; "" is
// skipped. A path that no cleaned request path can be — one that does not start with "/"
// ("healthz") or is not clean ("/a//b", "/a/./b") — fails NewMiddleware with
// R4C-REG-010.
func Exempt(paths ...string) MiddlewareOption {
	return func(m *middleware) {
		for _, p := range paths {
			switch {
			case p == "":
			case cleanedPath(p) != p: // never a cleaned request path
				if m.badExempt == "" {
					m.badExempt = p
				}
			case strings.HasSuffix(p, "/"):
				m.exemptPrefixes = append(m.exemptPrefixes, p)
			default:
				if m.exempt == nil {
					m.exempt = map[string]struct{}{}
				}
				m.exempt[p] = struct{}{}
			}
		}
	}
}

// cleanedPath returns p rooted and cleaned (path.Clean), keeping the "/" that ends a
// prefix: the form of the request paths Exempt's paths are compared with.
func cleanedPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// OnReject replaces the response to a refused request. Default 429 Too Many Requests with
// a short text body. fn is called with the Retry-After, Ratelimit-Policy and Ratelimit
// headers (and the LegacyHeaders) already set on w, and retryAfter, the exact time until
// the client's next permit (not rounded); it must write the status and the body. A nil fn
// keeps the default.
func OnReject(fn func(w http.ResponseWriter, r *http.Request, retryAfter time.Duration)) MiddlewareOption {
	return func(m *middleware) {
		if fn != nil {
			m.onReject = fn
		}
	}
}

// PolicyName names the quota policy in the Ratelimit-Policy and Ratelimit fields.
// Default "default". It is sent as a structured-field string: bytes other than printable
// ASCII are left out.
func PolicyName(name string) MiddlewareOption {
	return func(m *middleware) { m.policyName = name }
}

// AlwaysSendHeaders adds the Ratelimit-Policy and Ratelimit fields (and the
// LegacyHeaders, when on) to admitted responses too, so that clients can pace themselves.
// Default false: refused responses only. It costs each admitted request two small
// allocations (one more for a PolicyName longer than about 40 bytes).
func AlwaysSendHeaders(on bool) MiddlewareOption {
	return func(m *middleware) { m.always = on }
}

// The formats of LegacyHeaders' X-RateLimit-Reset.
const (
	resetUnixTime = "unix"
	resetSeconds  = "seconds"
)

// LegacyHeaders adds the X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset
// fields that older clients read, alongside the Ratelimit-Policy and Ratelimit fields
// (which stay): the limiter's Permits; the calls left now; and when the client's full
// quota is back, as reset says:
//   - "unix": the Unix time of the reset in whole seconds, rounded up, by the server's
//     wall clock (time.Now), e.g. "1767225601". It is what GitHub's REST API,
//     go-chi/httprate and ulule/limiter send, and what most clients of X-RateLimit-Reset
//     expect;
//   - "seconds": the seconds until the reset, rounded up, as the Ratelimit field's t
//     says, e.g. "1".
//
// They go where the Ratelimit fields go: on refused responses, and on admitted ones with
// AlwaysSendHeaders. Default off; "" is "unix". Any other reset fails NewMiddleware with
// R4C-ATR-007.
func LegacyHeaders(reset string) MiddlewareOption {
	return func(m *middleware) {
		m.legacy, m.reset = true, reset
		if reset == "" {
			m.reset = resetUnixTime
		}
	}
}

// configure applies opts to the defaults.
func configure(opts []MiddlewareOption) *middleware {
	m := &middleware{ips: newClientIPs(), policyName: "default", reset: resetUnixTime}
	for _, o := range opts {
		if o != nil {
			o(m)
		}
	}
	return m
}
