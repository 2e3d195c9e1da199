package resiliencehttp

import (
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit"
)

// MiddlewareOption configures Middleware. Middleware applies the options in order and
// skips nil ones.
type MiddlewareOption func(*middleware)

// KeyFunc keys requests by fn(r) instead of by client IP: an API key, a user id, a
// tenant. Default the client IP, as ClientIP finds it with TrustedProxies and
// ForwardedHeader; a nil fn keeps that default. Requests for which fn returns the same
// string share one quota; "" is a key like any other. fn runs on every request that is
// not exempt, concurrently, so it must be quick and safe for concurrent use; a string cut
// from the request (a header's value) costs no allocation, and the limiter copies it when
// it first stores it. With KeyFunc, TrustedProxies and ForwardedHeader are not used.
func KeyFunc(fn func(r *http.Request) string) MiddlewareOption {
	return func(m *middleware) { m.keyFunc = fn }
}

// TrustedProxies names the reverse proxies in front of the server, by address prefix
// (e.g. netip.MustParsePrefix("10.0.0.0/8")). Only a request whose connection comes from
// one of them has its client IP read from the forwarding header (ForwardedHeader): the
// header is walked from the nearest hop outwards, over the trusted proxies, to the first
// address that is not one — the client as the last trusted proxy saw it. An entry that is
// not an address ("unknown", an obfuscated identifier) ends the walk at the hop that wrote
// it. Default none: forwarding headers are ignored, since any client can send them.
// Several calls add prefixes; invalid prefixes are skipped.
func TrustedProxies(prefixes ...netip.Prefix) MiddlewareOption {
	return func(m *middleware) {
		for _, p := range prefixes {
			if p.IsValid() {
				m.ips.trusted = append(m.ips.trusted, p.Masked())
			}
		}
	}
}

// ForwardedHeader names the header that the trusted proxies write: "X-Forwarded-For" or
// "Forwarded" (RFC 7239, its for= parameters). Default "X-Forwarded-For". Only one is
// read, because a client can send the other with any content. Any other name is read as
// a comma-separated list of addresses, as X-Forwarded-For. It is read only from the
// proxies named by TrustedProxies.
func ForwardedHeader(name string) MiddlewareOption {
	return func(m *middleware) { m.ips.header = http.CanonicalHeaderKey(name) }
}

// Exempt lets requests for these paths through without limit: an exact path
// ("/healthz"), or, ending in "/", every path under it ("/static/"). Paths are compared
// with the request's URL.Path cleaned of dot segments and repeated slashes (path.Clean),
// so "/static/../api" is not exempt. Default none. Several calls add paths; "" is
// skipped.
func Exempt(paths ...string) MiddlewareOption {
	return func(m *middleware) {
		for _, p := range paths {
			switch {
			case p == "":
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

// OnReject replaces the response to a refused request. Default 429 Too Many Requests with
// a short text body. fn is called with the Retry-After, Ratelimit-Policy and Ratelimit
// headers already set on w, and retryAfter, the exact time until the client's next permit
// (not rounded); it must write the status and the body. A nil fn keeps the default.
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

// AlwaysSendHeaders adds the Ratelimit-Policy and Ratelimit fields to admitted responses
// too, so that clients can pace themselves. Default false: refused responses only. It
// costs the admitted path a few small allocations.
func AlwaysSendHeaders(on bool) MiddlewareOption {
	return func(m *middleware) { m.always = on }
}

type middleware struct {
	k              *ratelimit.Keyed[string]
	keyFunc        func(*http.Request) string
	ips            clientIPs
	exempt         map[string]struct{}
	exemptPrefixes []string
	onReject       func(http.ResponseWriter, *http.Request, time.Duration)
	policyName     string
	always         bool

	name   string // the policy name as a structured-field string, quoted
	policy string // the Ratelimit-Policy field value
}

// The header names, in canonical form, so that they can be set without canonicalising.
const (
	headerRetryAfter = "Retry-After"
	headerPolicy     = "Ratelimit-Policy"
	headerRateLimit  = "Ratelimit"
)

// Middleware returns server middleware that limits each client's requests with k (a
// ratelimit.Keyed limiter: Permits per Period per key).
//
// Each request that is not Exempt is keyed — by the client IP of its connection's
// RemoteAddr by default, through TrustedProxies' forwarding header when the connection
// comes from one of them, or by KeyFunc — and takes a permit for its key without waiting
// (k's MaxWait is not used: a server answers at once). An admitted request goes on to
// the next handler. A refused one is answered, by default, 429 Too Many Requests with:
//   - Retry-After: the seconds until the client's next permit, rounded up;
//   - Ratelimit-Policy: "default";q=<Permits>;w=<Period in seconds, rounded up>;
//   - Ratelimit: "default";r=<calls left now>;t=<seconds until the full quota, rounded up>;
//
// the two fields of draft-ietf-httpapi-ratelimit-headers-09. A new client refused because
// k holds MaxKeys busy keys (a flood of distinct keys) gets the same answer, with
// Retry-After the time until k has room (see ratelimit.Keyed).
//
// An admitted request for a key k already holds allocates nothing in the middleware. The
// returned function and the handlers it makes are safe for concurrent use.
func Middleware(k *ratelimit.Keyed[string], opts ...MiddlewareOption) func(http.Handler) http.Handler {
	m := &middleware{k: k, onReject: reject, policyName: "default"}
	for _, o := range opts {
		if o != nil {
			o(m)
		}
	}
	if m.ips.header == "" {
		m.ips.header = headerXFF
	}
	cfg := k.Config()
	m.name = sfString(m.policyName)
	m.policy = m.name + ";q=" + strconv.Itoa(cfg.Permits) + ";w=" + strconv.FormatInt(ceilSeconds(cfg.Period), 10)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m.exempted(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			d := m.k.Decide(m.key(r))
			if d.Admitted {
				if m.always {
					m.setFields(w.Header(), d)
				}
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h[headerRetryAfter] = []string{strconv.FormatInt(ceilSeconds(d.RetryAfter), 10)}
			m.setFields(h, d)
			m.onReject(w, r, d.RetryAfter)
		})
	}
}

func (m *middleware) key(r *http.Request) string {
	if m.keyFunc != nil {
		return m.keyFunc(r)
	}
	return m.ips.of(r)
}

func (m *middleware) exempted(p string) bool {
	if len(m.exempt) == 0 && len(m.exemptPrefixes) == 0 {
		return false
	}
	trailing := strings.HasSuffix(p, "/")
	p = path.Clean("/" + p)
	if trailing && p != "/" {
		p += "/" // "/static/" stays under the prefix "/static/"
	}
	if _, ok := m.exempt[p]; ok {
		return true
	}
	for _, prefix := range m.exemptPrefixes {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// setFields sets the Ratelimit-Policy and Ratelimit fields for decision d.
func (m *middleware) setFields(h http.Header, d ratelimit.Decision) {
	h[headerPolicy] = []string{m.policy}
	h[headerRateLimit] = []string{m.name + ";r=" + strconv.Itoa(d.Remaining) + ";t=" +
		strconv.FormatInt(ceilSeconds(d.Reset), 10)}
}

// reject is the default answer to a refused request.
func reject(w http.ResponseWriter, _ *http.Request, _ time.Duration) {
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
}

// ceilSeconds returns d in whole seconds, rounded up, so that a client that waits that
// long finds its permit; 0 for d ≤ 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// sfString returns s as a structured-field string (RFC 8941 §3.3.3): quoted, with '"' and
// '\' escaped, and the bytes that are not printable ASCII left out.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c <= 0x7e:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
