package resiliencehttp

import (
	"net/http"
	"time"
)

// RetryAfterOf is retryAfter, for the package's tests.
func RetryAfterOf(h http.Header, now time.Time) (time.Duration, bool) { return retryAfter(h, now) }

// ClientIP returns the key of a request's client, as NewMiddleware with opts finds it when
// no KeyFunc gives one, for the package's tests.
func ClientIP(opts ...MiddlewareOption) (func(r *http.Request) string, error) {
	m := configure(opts)
	if err := m.ips.validate(); err != nil {
		return nil, err
	}
	return m.ips.of, nil
}
