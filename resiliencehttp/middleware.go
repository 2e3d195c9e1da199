package resiliencehttp

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/nilcheck"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// KeyedLimiter is what NewMiddleware needs of a per-key rate limiter. *keyed.Limiter[string]
// (package ratelimit/keyed) is one (with a backend such as ratelimit/redis, its quotas are shared by every
// instance of the service); implement it to bring another store.
//
// Decide takes a permit for key, without waiting, and reports the key's quota after the
// call, as keyed.Decision says: Admitted; Remaining, the calls that would pass now,
// 0..Permits; for a refusal, RetryAfter, how long until the key's next permit; Reset, how
// long until its full quota is back. Negative durations are read as 0 and Remaining is
// kept within 0..Permits. Decide has no error: a limiter whose store can fail decides
// itself whether to admit (fail open) or refuse (fail closed). It is called for every
// request that is not exempt, concurrently, so it must be safe for concurrent use, with
// the request's context: its observer's recorder then sees the request's trace.
//
// Config gives the quota the headers report: Permits per Period, and Windows. NewMiddleware
// calls it once; Permits must be at least 1 (else R4C-ATR-003) and Period positive
// (else R4C-ATR-002). Its other fields are not used. A Decision whose Period is set
// (positive) and whose Limit, Period or Windows differ from Config's reports the quota
// of a key with a limit of its own (keyed.PerKey), which the headers then report.
//
// A limiter that also has DecideN(ctx, key string, n int) keyed.Decision, taking n
// permits at once, as keyed.Limiter[string] does, serves Weight and NewLimit.
type KeyedLimiter interface {
	Decide(ctx context.Context, key string) keyed.Decision
	Config() ratelimit.Config
}

type middleware struct {
	k              KeyedLimiter
	keyFunc        func(*http.Request) string
	ips            clientIPs
	exempt         map[string]struct{}
	exemptPrefixes []string
	badExempt      string                                                  // the first path Exempt was given that no request path can be
	onReject       func(http.ResponseWriter, *http.Request, time.Duration) // nil: the default answer
	policyName     string
	always         bool
	legacy         bool
	reset          string // LegacyHeaders' reset: resetUnixTime or resetSeconds
	exempting      bool   // some paths are exempt

	prioHeader   string                              // PriorityHeader's name, canonical; "" without it
	prioHighest  policy.Priority                     // PriorityHeader's highest
	prioSet      bool                                // PriorityHeader was given
	prioFunc     func(*http.Request) policy.Priority // PriorityFunc's; nil without it
	prioritizing bool                                // either was given

	weight  func(*http.Request) int // Weight's; nil: every request costs 1
	decideN func(ctx context.Context, key string, n int) keyed.Decision

	name   string // the policy name as a structured-field string, quoted
	quota  keyQuota
	nvals  int                      // how many header values a refusal sets
	others atomic.Pointer[keyQuota] // the last quota of a key with a limit of its own

	// refused holds the values of the last refusal's fields, shared by the refusals that
	// say the same: replaced, never changed.
	refused atomic.Pointer[fields]
}

// quota is what the rate-limit fields say of one decision, in whole seconds: what their
// values are made of.
type quota struct {
	retryAfter int64 // Retry-After, for a refusal; else 0
	remaining  int   // Ratelimit's r and X-RateLimit-Remaining
	reset      int64 // Ratelimit's t
	resetAt    int64 // X-RateLimit-Reset, with LegacyHeaders; else 0
}

// fields holds the header values of one quota, formatted. It is not changed once made, so
// that refusals saying the same quota can share it from any goroutine.
type fields struct {
	q          quota
	retryAfter string
	rateLimit  string
	remaining  string
	resetAt    string
}

// The header names, in canonical form, so that they can be set without canonicalising.
const (
	headerContentLength = "Content-Length"
	headerContentType   = "Content-Type"
	headerNoSniff       = "X-Content-Type-Options"

	headerRetryAfter = "Retry-After"
	headerPolicy     = "Ratelimit-Policy"
	headerRateLimit  = "Ratelimit"
	headerXLimit     = "X-Ratelimit-Limit"
	headerXRemaining = "X-Ratelimit-Remaining"
	headerXReset     = "X-Ratelimit-Reset"
)

// NewMiddleware returns server middleware that limits each client's requests with k (a
// KeyedLimiter, such as a keyed.Limiter[string]: Permits per Period per key).
//
// Each request that is not Exempt is keyed — by KeyFunc, or by its client's network: the
// connection's RemoteAddr, or the forwarding header when the connection comes from one of
// the TrustedProxies, one key per IPv4 address and per IPv6 /64 (IPv4Prefix, IPv6Prefix)
// — and takes a permit for its key without waiting (a keyed.Limiter's MaxWait is not
// used: a server answers at once). An admitted request goes on to the next handler. A
// refused one is answered, by default, 429 Too Many Requests with:
//   - Retry-After: the seconds until the client's next permit, rounded up;
//   - Ratelimit-Policy: "default";q=<Permits>;w=<Period in seconds, rounded up>; and,
//     for a limiter with further windows (Config().Windows, see ratelimit.Windows), one
//     item more for each, named after the policy with "-2", "-3"…:
//     "default";q=10;w=1, "default-2";q=1000;w=86400;
//   - Ratelimit: "default";r=<calls left now>;t=<seconds until the full quota, rounded up>
//     (with further windows, r is the fewest calls left over all of them and t the time
//     until every one is full again);
//
// the two fields of draft-ietf-httpapi-ratelimit-headers-09 (the shape kept since
// revision -08); and, with LegacyHeaders, X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset. For a limiter of 10 per second:
//
//	HTTP/1.1 429 Too Many Requests
//	Retry-After: 1
//	Ratelimit-Policy: "default";q=10;w=1
//	Ratelimit: "default";r=0;t=1
//
// A client's address is made canonical first, so that one client has one key however it
// is written: an IPv4-mapped IPv6 address (::ffff:192.0.2.1) is the IPv4 address, the
// zone of an IPv6 address (fe80::1%eth0) is dropped, and IPv6 is written in its canonical
// form (RFC 5952). The key is then the address itself for a full-length prefix
// ("192.0.2.1", the default for IPv4), and the network in CIDR notation otherwise
// ("2001:db8:1:2::/64", the default for IPv6); an address forwarded with a port loses the
// port. A RemoteAddr that is not an IP address (a Unix socket's) is the key as written.
//
// Per-tenant limits: with a keyed.Limiter built with keyed.PerKey, or given a key's limit
// by SetLimit, each key is held to its own limit, and Ratelimit-Policy and
// X-RateLimit-Limit report it; Weight makes a request cost more than one permit, and
// NewLimit decides from inside a handler, once the tenant is known.
//
// The limiter holds a bounded number of keys (keyed.Bounds for a keyed.Limiter).
// Keying by network bounds what one client can take of them: all the addresses of an
// IPv6 /64 are one key, so rotating through them neither multiplies the client's quota
// nor fills the limiter. What a full limiter does with a new key is the limiter's to say
// (for a keyed.Limiter, see Limiter and Bounds: it makes room by evicting a key that is
// idle, or the soonest to be); the middleware answers its decision like any other, a
// refusal with 429 and the limiter's retry-after.
//
// A bad configuration is a *policy.ConfigError: R4C-REG-010 for a nil k (or a nil pointer
// in it), an exempt path that no request's cleaned path can be, or an invalid trusted
// proxy prefix; R4C-ATR-003 when k.Config().Permits is less than 1, R4C-ATR-002 when its
// Period is not positive, R4C-ATR-007 for IPv4Prefix, IPv6Prefix or LegacyHeaders out of
// range. The returned function never panics: given a nil next handler, it makes a handler
// that answers every request 500 Internal Server Error.
//
// An admitted request from a client whose key k already holds allocates nothing in the
// middleware (the keys of IPv4 addresses at /32 are cut from the request; the keys of
// other clients are cached, in 1,024 slots, by network). A refused one costs one
// allocation, the slice that holds its header values: each response gets its own, so
// that nothing a handler or another middleware does to one response's header reaches
// another's. The values themselves are formatted once and shared by the refusals that
// follow for as long as they say the same (the same whole seconds, the same calls left).
// The returned function and the handlers it makes are safe for concurrent use.
func NewMiddleware(k KeyedLimiter, opts ...MiddlewareOption) (func(http.Handler) http.Handler, error) {
	m, err := newMiddleware(k, opts)
	if err != nil {
		return nil, err
	}
	return m.wrap, nil
}

// newMiddleware returns the middleware of k and opts, validated.
func newMiddleware(k KeyedLimiter, opts []MiddlewareOption) (*middleware, error) {
	if nilcheck.Is(k) {
		return nil, r4c.Errorf(r4c.BadSpec, "resiliencehttp.limiter", "",
			"the middleware needs a keyed rate limiter (e.g. keyed.New[string]), not nil")
	}
	m := configure(opts)
	m.k = k
	if err := m.ips.validate(); err != nil {
		return nil, err
	}
	if err := m.validatePriority(); err != nil {
		return nil, err
	}
	if m.badExempt != "" {
		return nil, r4c.Errorf(r4c.BadSpec, "resiliencehttp.exempt", m.badExempt,
			"an exempt path is compared with the request's cleaned path, which starts with / and is clean (path.Clean): write %q",
			cleanedPath(m.badExempt))
	}
	if m.reset != resetUnixTime && m.reset != resetSeconds {
		return nil, r4c.Errorf(r4c.OutOfRange, "resiliencehttp.legacyHeaders", m.reset,
			"the reset format is %q or %q", resetUnixTime, resetSeconds)
	}
	cfg := k.Config()
	if cfg.Permits < 1 {
		return nil, r4c.Errorf(r4c.BadPermits, "rateLimiter.permits", strconv.Itoa(cfg.Permits),
			"the limiter's Config().Permits must be at least 1")
	}
	if cfg.Period <= 0 {
		return nil, r4c.Errorf(r4c.ZeroPeriod, "rateLimiter.period", cfg.Period.String(),
			"the limiter's Config().Period must be positive")
	}
	if dn, ok := k.(interface {
		DecideN(ctx context.Context, key string, n int) keyed.Decision
	}); ok {
		m.decideN = dn.DecideN
	} else if m.weight != nil {
		return nil, errNoDecideN(k, "Weight")
	}
	m.exempting = len(m.exempt) > 0 || len(m.exemptPrefixes) > 0
	m.name = sfString(m.policyName)
	q, err := m.quotaFor(cfg.Permits, cfg.Period, cfg.Windows)
	if err != nil {
		return nil, err
	}
	m.quota = q
	m.nvals = 3 // Retry-After, Ratelimit-Policy, Ratelimit
	if m.legacy {
		m.nvals += 3
	}
	if m.onReject == nil {
		m.nvals += 2 // Content-Type, X-Content-Type-Options
	}
	return m, nil
}

// errNoDecideN is the error of what, given a limiter k without DecideN.
func errNoDecideN(k KeyedLimiter, what string) error {
	return r4c.Errorf(r4c.BadSpec, "resiliencehttp.limiter", fmt.Sprintf("%T", k),
		"%s needs a limiter with a DecideN(ctx, key string, n int) keyed.Decision method, such as keyed.Limiter[string]", what)
}

func (m *middleware) wrap(next http.Handler) http.Handler {
	if nilcheck.Is(next) {
		return failing("resiliencehttp: the rate-limit middleware was given a nil http.Handler")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.exempting && r.URL != nil && m.exempted(r.URL.Path) {
			next.ServeHTTP(w, m.prioritize(r))
			return
		}
		n := 1
		if m.weight != nil {
			n = m.weight(r)
		}
		if !m.decide(w, r, m.key(r), n) {
			return
		}
		next.ServeHTTP(w, m.prioritize(r))
	})
}

// decide takes n permits (fewer than 1 count as 1; more than the key's burst, as the
// burst) for key, and reports whether the request is admitted: the fields of an admitted
// one are set with AlwaysSendHeaders; a refused one is answered.
func (m *middleware) decide(w http.ResponseWriter, r *http.Request, key string, n int) bool {
	var d keyed.Decision
	if n <= 1 || m.decideN == nil {
		d = m.k.Decide(r.Context(), key)
	} else if d = m.decideN(r.Context(), key, n); !d.Admitted && d.RetryAfter == 0 && d.Limit >= 1 {
		// More than the key's burst, which no call can take: the request costs the burst,
		// the fewest permits of the key's windows.
		burst := d.Limit
		if kq := m.quotaOfKey(d.Limit, d.Period, d.Windows); kq.permits == d.Limit {
			burst = kq.burst
		}
		if n > burst {
			d = m.decideN(r.Context(), key, burst)
		}
	}
	if !d.Admitted {
		m.refuse(w, r, d)
		return false
	}
	if m.always {
		var f fields
		kq := m.quotaOfKey(d.Limit, d.Period, d.Windows)
		m.format(&f, m.quotaOf(d, kq, false), false)
		n := 2
		if m.legacy {
			n += 3
		}
		m.setFields(w.Header(), make([]string, n), kq, &f)
	}
	return true
}

// tooManyRequests is the body of the default refusal, as http.Error writes it.
var tooManyRequests = []byte(http.StatusText(http.StatusTooManyRequests) + "\n")

// refuse answers a refused request: its fields, then onReject, or the default answer,
// which is http.Error's with the status text.
func (m *middleware) refuse(w http.ResponseWriter, r *http.Request, d keyed.Decision) {
	kq := m.quotaOfKey(d.Limit, d.Period, d.Windows)
	q := m.quotaOf(d, kq, true)
	f := m.refused.Load()
	if f == nil || f.q != q {
		f = new(fields)
		m.format(f, q, true)
		m.refused.Store(f)
	}
	// The response's own values: a handler may change its header's slices in place.
	vals := make([]string, m.nvals)
	h := w.Header()
	vals = set(h, vals, headerRetryAfter, f.retryAfter)
	vals = m.setFields(h, vals, kq, f)
	if m.onReject != nil {
		m.onReject(w, r, max(d.RetryAfter, 0))
		return
	}
	delete(h, headerContentLength)
	vals = set(h, vals, headerContentType, "text/plain; charset=utf-8")
	set(h, vals, headerNoSniff, "nosniff")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(tooManyRequests)
}

// set sets the field key of h to the one value v, held in vals[0], and returns the rest
// of vals.
func set(h http.Header, vals []string, key, v string) []string {
	vals[0] = v
	h[key] = vals[:1:1]
	return vals[1:]
}

// failing returns a handler that answers every request 500 with msg.
func failing(msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, msg, http.StatusInternalServerError)
	})
}

// key returns the key of r: KeyFunc's, or, when there is none or it returns "", that of
// r's client.
func (m *middleware) key(r *http.Request) string {
	if m.keyFunc != nil {
		if k := m.keyFunc(r); k != "" {
			return k
		}
	}
	return m.ips.of(r)
}

func (m *middleware) exempted(p string) bool {
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

// quotaOf returns what the fields say of decision d; refused adds its Retry-After.
func (m *middleware) quotaOf(d keyed.Decision, kq *keyQuota, refused bool) quota {
	q := quota{remaining: min(max(d.Remaining, 0), kq.permits), reset: ceilSeconds(d.Reset)}
	if refused {
		q.retryAfter = ceilSeconds(d.RetryAfter)
	}
	if !m.legacy {
		return q
	}
	q.resetAt = q.reset
	if m.reset == resetUnixTime {
		at := time.Now().Add(max(d.Reset, 0))
		q.resetAt = at.Unix()
		if at.Nanosecond() > 0 {
			q.resetAt++
		}
	}
	return q
}

// format fills f with the values of q's fields, Retry-After's for a refusal. They are
// cut from one string.
func (m *middleware) format(f *fields, q quota, refused bool) {
	var buf [96]byte
	b := append(append(buf[:0], m.name...), ";r="...)
	r := len(b)
	b = strconv.AppendInt(b, int64(q.remaining), 10)
	t := len(b)
	b = strconv.AppendInt(append(b, ";t="...), q.reset, 10)
	ra := len(b)
	if refused {
		b = strconv.AppendInt(b, q.retryAfter, 10)
	}
	x := len(b)
	if m.legacy {
		b = strconv.AppendInt(b, q.resetAt, 10)
	}
	s := string(b)
	f.q = q
	f.rateLimit, f.remaining, f.retryAfter, f.resetAt = s[:ra], s[r:t], s[ra:x], s[x:]
}

// setFields sets the Ratelimit-Policy and Ratelimit fields, and the legacy ones when on,
// to the values of kq and f, held in vals, and returns the rest of vals.
func (m *middleware) setFields(h http.Header, vals []string, kq *keyQuota, f *fields) []string {
	vals = set(h, vals, headerPolicy, kq.policy)
	vals = set(h, vals, headerRateLimit, f.rateLimit)
	if !m.legacy {
		return vals
	}
	vals = set(h, vals, headerXLimit, kq.limit)
	vals = set(h, vals, headerXRemaining, f.remaining)
	return set(h, vals, headerXReset, f.resetAt)
}

// ceilSeconds returns d in whole seconds, rounded up, so that a client that waits that
// long finds its permit; 0 for d ≤ 0.
func ceilSeconds(d time.Duration) int64 { return retryhint.Ceil(d, time.Second) }

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

// windowItems returns the Ratelimit-Policy items of windows, a limiter's further windows
// as ratelimit.Config.Windows lists them ("permits/period", separated by commas), each
// after a comma and named name-2, name-3…, and the fewest permits of a window (0 for
// none); a list that is not of that form is
// R4C-ATR-005, a window of permits < 1 R4C-ATR-003, of a period ≤ 0 R4C-ATR-002.
func windowItems(name, windows string) (string, int, error) {
	var b strings.Builder
	i, fewest := 1, 0
	for w := range strings.SplitSeq(windows, ",") {
		p, d, found := strings.Cut(strings.TrimSpace(w), "/")
		permits, perr := strconv.Atoi(strings.TrimSpace(p))
		period, derr := policy.ParseDuration(d)
		switch {
		case !found || perr != nil || derr != nil:
			return "", 0, r4c.Errorf(r4c.BadNumber, "rateLimiter.windows", windows,
				"the limiter's Config().Windows must list permits/period pairs separated by commas")
		case permits < 1:
			return "", 0, r4c.Errorf(r4c.BadPermits, "rateLimiter.windows", windows,
				"a window's permits must be at least 1")
		case period <= 0:
			return "", 0, r4c.Errorf(r4c.ZeroPeriod, "rateLimiter.windows", windows,
				"a window's period must be positive")
		}
		if i++; fewest == 0 || permits < fewest {
			fewest = permits
		}
		b.WriteString(", ")
		b.WriteString(sfString(name + "-" + strconv.Itoa(i)))
		b.WriteString(";q=" + strconv.Itoa(permits) + ";w=" + strconv.FormatInt(ceilSeconds(period), 10))
	}
	return b.String(), fewest, nil
}
