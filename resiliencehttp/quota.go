package resiliencehttp

import (
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// keyQuota is the quota of a key as the fields say it: the limiter's (Config), or that of
// a key with a limit of its own (Decision's Limit, Period and Windows).
type keyQuota struct {
	permits int
	period  time.Duration
	windows string
	policy  string // the Ratelimit-Policy field value
	limit   string // the X-RateLimit-Limit field value
}

// quotaFor returns the quota of permits per period, with the further windows.
func (m *middleware) quotaFor(permits int, period time.Duration, windows string) (keyQuota, error) {
	q := keyQuota{permits: permits, period: period, windows: windows, limit: strconv.Itoa(permits)}
	q.policy = m.name + ";q=" + strconv.Itoa(permits) + ";w=" + strconv.FormatInt(ceilSeconds(period), 10)
	if windows != "" {
		more, err := windowItems(m.policyName, windows)
		if err != nil {
			return q, err
		}
		q.policy += more
	}
	return q, nil
}

// quotaOfKey returns the quota of d's key: the limiter's, unless d tells one of the key's
// own (a Period, and a Limit, Period or Windows that differ), made once and shared by the
// decisions that follow for as long as they tell the same.
func (m *middleware) quotaOfKey(d keyed.Decision) *keyQuota {
	if d.Period <= 0 || d.Limit < 1 || d.Limit == m.quota.permits && d.Period == m.quota.period && d.Windows == m.quota.windows {
		return &m.quota
	}
	if q := m.others.Load(); q != nil && q.permits == d.Limit && q.period == d.Period && q.windows == d.Windows {
		return q
	}
	q, err := m.quotaFor(d.Limit, d.Period, d.Windows)
	if err != nil { // windows the fields cannot say: the first pair alone
		q, _ = m.quotaFor(d.Limit, d.Period, "")
		q.windows = d.Windows
	}
	m.others.Store(&q)
	return &q
}

// windowItems returns the Ratelimit-Policy items of windows, a limiter's further windows
// as ratelimit.Config.Windows lists them ("permits/period", separated by commas), each
// after a comma and named name-2, name-3…; a list that is not of that form is
// R4C-ATR-005, a window of permits < 1 R4C-ATR-003, of a period ≤ 0 R4C-ATR-002.
func windowItems(name, windows string) (string, error) {
	var b strings.Builder
	i := 1
	for w := range strings.SplitSeq(windows, ",") {
		p, d, found := strings.Cut(strings.TrimSpace(w), "/")
		permits, perr := strconv.Atoi(strings.TrimSpace(p))
		period, derr := policy.ParseDuration(d)
		switch {
		case !found || perr != nil || derr != nil:
			return "", r4c.Errorf(r4c.BadNumber, "rateLimiter.windows", windows,
				"the limiter's Config().Windows must list permits/period pairs separated by commas")
		case permits < 1:
			return "", r4c.Errorf(r4c.BadPermits, "rateLimiter.windows", windows,
				"a window's permits must be at least 1")
		case period <= 0:
			return "", r4c.Errorf(r4c.ZeroPeriod, "rateLimiter.windows", windows,
				"a window's period must be positive")
		}
		i++
		b.WriteString(", ")
		b.WriteString(sfString(name + "-" + strconv.Itoa(i)))
		b.WriteString(";q=" + strconv.Itoa(permits) + ";w=" + strconv.FormatInt(ceilSeconds(period), 10))
	}
	return b.String(), nil
}
