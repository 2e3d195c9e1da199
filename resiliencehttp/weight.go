package resiliencehttp

import (
	"net/http"
)

// Weight gives each request a cost in permits, fn(r), instead of 1: a bulk export may
// cost 10 where a read costs 1, as go-chi/httprate's WithIncrement. The request takes
// that many permits of its key at once, all or none, through the limiter's DecideN (a
// keyed.Limiter[string] has it; another KeyedLimiter without a DecideN(ctx, key string,
// n int) keyed.Decision method fails NewMiddleware with R4C-REG-010). A weight below 1
// counts as 1, so that no request passes free. A weight above the key's burst (Permits,
// the key's own for a key with a limit of its own, or the fewest permits of a further
// window when fewer), which no call could ever take, costs
// the whole burst: the request passes when its key's full quota is free; its first
// DecideN is refused by the limiter (an EventRejected event matching
// ratelimit.ErrExceedsBurst), and a second one takes the burst. The headers report the
// key's quota after the request, as for any other. Default none: every request costs 1.
// fn runs on every request that is not exempt, concurrently, so it must be quick and
// safe for concurrent use.
func Weight(fn func(r *http.Request) int) MiddlewareOption {
	return func(m *middleware) { m.weight = fn }
}

// NewLimit returns a function that limits a request from inside a handler: after
// authentication, say, once the tenant is known. limit(w, r, key, n) takes n permits for
// key from k, as the middleware of NewMiddleware(k, opts...) takes a request's (n below 1
// counts as 1, above the key's burst as the burst, see Weight; "" keys the request by its
// client IP, found as the middleware finds it). It returns true when they are taken, with
// the fields set on w when AlwaysSendHeaders is on; and false when the request was
// refused, after answering it as the middleware does (429 Too Many Requests with
// Retry-After, Ratelimit-Policy and Ratelimit, or OnReject's answer): the handler then
// returns without writing. For a key with a limit of its own (keyed.PerKey,
// keyed.Limiter.SetLimit), the fields report the key's quota. opts are the middleware's;
// KeyFunc, Exempt, Weight and the priority options have no effect. Errors are
// NewMiddleware's, and R4C-REG-010 for a k without a DecideN(ctx, key string, n int)
// keyed.Decision method (a keyed.Limiter[string] has one). The function is safe for
// concurrent use; an admitted call allocates nothing in it unless AlwaysSendHeaders is on.
func NewLimit(k KeyedLimiter, opts ...MiddlewareOption) (func(w http.ResponseWriter, r *http.Request, key string, n int) bool, error) {
	m, err := newMiddleware(k, opts)
	if err != nil {
		return nil, err
	}
	if m.decideN == nil {
		return nil, errNoDecideN(k, "NewLimit")
	}
	return func(w http.ResponseWriter, r *http.Request, key string, n int) bool {
		if key == "" {
			key = m.ips.of(r)
		}
		return m.decide(w, r, key, n)
	}, nil
}
