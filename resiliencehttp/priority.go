package resiliencehttp

import (
	"net/http"

	"github.com/resilience4go/resilience4go/internal/priorityvalue"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// PriorityHeader gives each admitted request (and each Exempt one) the priority its
// header name says, for the handlers after the middleware: a bulkhead or an adaptive
// limit that the handler calls through sheds the lower priorities first. The value is
// a level's name or number, as policy.ParsePriority reads it ("sheddable",
// "sheddable_plus", "critical", "critical_plus", or 0 to 3), at most 32 bytes; the first
// value counts. A value above highest is lowered to highest: any client can send any
// value, so highest is what the server grants one that asks, e.g.
// policy.PriorityCritical, so that only the server itself (PriorityFunc) raises a request
// to critical_plus. A request without the header, or whose value names no priority, gets
// PriorityFunc's priority, or, without PriorityFunc, keeps its context's
// (policy.PriorityCritical unless an outer handler set one); such a value is neither
// counted nor logged (to see them, read the header in a PriorityFunc with
// policy.ParsePriority). Reading a name as Priority.String writes it, or a number,
// allocates nothing. Default none: no header is read, and there is no default name
// (X-Request-Priority is a fine one). A name that is not an HTTP field name ("" among
// them) fails NewMiddleware with R4C-REG-010, a highest outside the levels with
// R4C-ATR-007.
//
// The priority is set after the limiter admits the request, so a refused request costs
// nothing more. A request whose priority is not its context's costs two allocations, its
// context and the copy of the request that carries it (http.Request.WithContext).
func PriorityHeader(name string, highest policy.Priority) MiddlewareOption {
	return func(m *middleware) {
		m.prioHeader, m.prioHighest, m.prioSet = http.CanonicalHeaderKey(name), highest, true
	}
}

// PriorityFunc gives each admitted request (and each Exempt one) the priority fn returns,
// for the handlers after the middleware, as PriorityHeader does; with PriorityHeader, fn
// decides the priority of the requests whose header is absent or names none. fn is the
// server's code, so its priority is not capped: a value outside the levels is the
// nearest level. It runs on those requests concurrently, so it must be quick and safe
// for concurrent use. Default none; a nil fn keeps the default.
func PriorityFunc(fn func(r *http.Request) policy.Priority) MiddlewareOption {
	return func(m *middleware) {
		if fn != nil {
			m.prioFunc = fn
		}
	}
}

// validatePriority checks PriorityHeader's name and highest.
func (m *middleware) validatePriority() error {
	m.prioritizing = m.prioSet || m.prioFunc != nil
	if !m.prioSet {
		return nil
	}
	if !validFieldName(m.prioHeader) {
		return r4c.Errorf(r4c.BadSpec, "resiliencehttp.priorityHeader", m.prioHeader,
			"the priority header needs a field name, such as X-Request-Priority")
	}
	return priorityvalue.CheckHighest("resiliencehttp.priorityHeader", m.prioHighest)
}

// prioritize returns r with the priority the options give it, or r itself when they give
// none or the one its context carries.
func (m *middleware) prioritize(r *http.Request) *http.Request {
	if !m.prioritizing {
		return r
	}
	p, ok := m.priorityOf(r)
	if !ok {
		return r
	}
	ctx := r.Context()
	if p == policy.PriorityFrom(ctx) {
		return r
	}
	return r.WithContext(policy.WithPriority(ctx, p))
}

// priorityOf returns the priority of r: its header's, capped, else PriorityFunc's; ok is
// false when neither gives one.
func (m *middleware) priorityOf(r *http.Request) (policy.Priority, bool) {
	if m.prioHeader != "" {
		if p, ok := priorityvalue.Asked(r.Header[m.prioHeader], m.prioHighest); ok {
			return p, true
		}
	}
	if m.prioFunc != nil {
		return priorityvalue.Nearest(m.prioFunc(r)), true
	}
	return 0, false
}

// validFieldName reports whether s is an HTTP field name: a token (RFC 9110 §5.1).
func validFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c < 0x80 && c > ' ' && c != 0x7f && !isDelimiter(c):
		default:
			return false
		}
	}
	return true
}

// isDelimiter reports whether c is one of the delimiters a token leaves out.
func isDelimiter(c byte) bool {
	for i := 0; i < len(fieldDelimiters); i++ {
		if fieldDelimiters[i] == c {
			return true
		}
	}
	return false
}

const fieldDelimiters = `"(),/:;<=>?@[\]{}`

// sendPriority sets the transport's priority header of req, an attempt's copy of the
// caller's request, to its context's priority, in a header map of its own that shares the
// caller's values (a RoundTripper does not change them); a header the caller set stays.
func (t *transport) sendPriority(req *http.Request) {
	if _, set := req.Header[t.priority]; set {
		return
	}
	h := make(http.Header, len(req.Header)+1)
	for k, v := range req.Header {
		h[k] = v
	}
	h[t.priority] = priorityValues[policy.PriorityFrom(req.Context())]
	req.Header = h
}

// priorityValues are the header values of the levels, shared by every request: a
// RoundTripper reads a request's header, and one that appends to a value gets a copy.
var priorityValues = [...][]string{
	{policy.PrioritySheddable.String()}, {policy.PrioritySheddablePlus.String()},
	{policy.PriorityCritical.String()}, {policy.PriorityCriticalPlus.String()},
}
