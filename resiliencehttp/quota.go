package resiliencehttp

import (
	"strconv"
	"time"
)

// keyQuota is the quota of a key as the fields say it: the limiter's (Config), or that of
// a key with a limit of its own (Decision's Limit, Period and Windows).
type keyQuota struct {
	permits int
	period  time.Duration
	windows string
	burst   int    // the most permits one call may take: the fewest permits of the quota and of its windows
	policy  string // the Ratelimit-Policy field value
	limit   string // the X-RateLimit-Limit field value
}

// quotaFor returns the quota of permits per period, with the further windows.
func (m *middleware) quotaFor(permits int, period time.Duration, windows string) (keyQuota, error) {
	q := keyQuota{permits: permits, period: period, windows: windows, burst: permits, limit: strconv.Itoa(permits)}
	q.policy = m.name + ";q=" + strconv.Itoa(permits) + ";w=" + strconv.FormatInt(ceilSeconds(period), 10)
	if windows != "" {
		more, fewest, err := windowItems(m.policyName, windows)
		if err != nil {
			return q, err
		}
		q.policy += more
		q.burst = min(q.burst, fewest)
	}
	return q, nil
}

// quotaOfKey returns the quota of a decision's key, whose Limit, Period and Windows are
// given: the limiter's, unless they tell one of the key's own (a Period, and a Limit,
// Period or Windows that differ), made once and shared by the
// decisions that follow for as long as they tell the same.
func (m *middleware) quotaOfKey(limit int, period time.Duration, windows string) *keyQuota {
	if period <= 0 || limit < 1 || limit == m.quota.permits && period == m.quota.period && windows == m.quota.windows {
		return &m.quota
	}
	if q := m.others.Load(); q != nil && q.permits == limit && q.period == period && q.windows == windows {
		return q
	}
	q, err := m.quotaFor(limit, period, windows)
	if err != nil { // windows the fields cannot say: the first pair alone
		q, _ = m.quotaFor(limit, period, "")
		q.windows = windows
	}
	m.others.Store(&q)
	return &q
}
