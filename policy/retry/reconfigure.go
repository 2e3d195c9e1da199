package retry

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// reconfigure changes the retry's configuration to c, for a registry's reload, for the
// calls that start after it: MaxAttempts, Delay, Multiplier, MaxDelay, Jitter,
// WaitForPermit and Disabled. A call in progress keeps the configuration it started with
// to its end (its attempts, its waits, its jitter), so no call sees part of one
// configuration and part of another. The retries that permitsFrom returned for r see the
// change too.
//
// c is checked as checkReconfigure checks it, and on error nothing changes: an invalid c
// returns New's *policy.ConfigError (R4C-ATR-007, R4C-ATR-004); a c whose RetryOn or
// AbortOn is not the retry's (compared by identity, as a shared name compares them)
// returns R4C-REG-012. The lists are set in code only: they say which errors are safe to
// retry, and a configuration resolved afresh would drop them silently.
//
// A change publishes one ConfigChanged event whose Changed names, sorted, the settings
// that changed by their configuration attribute names ("delay", "enabled", "jitter",
// "maxAttempts", "maxDelay", "multiplier", "waitForPermit"); a c equal to the
// configuration in force changes and publishes nothing. A Retry not built by New cannot
// be reconfigured (R4C-REG-010). Safe for concurrent use with every other method;
// concurrent calls take effect one after the other.
func (r *Retry) reconfigure(c Config) error {
	if err := r.checkReconfigure(c); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cfg.Load()
	names := changed(*old, c)
	if len(names) == 0 {
		return nil
	}
	// The lists are the same values (checkReconfigure): keep the retry's own.
	c.RetryOn, c.AbortOn = old.RetryOn, old.AbortOn
	r.cfg.Store(&c)
	r.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: names})
	return nil
}

// checkReconfigure reports the error reconfigure(c) would return, changing nothing; nil
// when reconfigure(c) would succeed. Safe for concurrent use.
func (r *Retry) checkReconfigure(c Config) error {
	if !r.built() {
		return r4c.Errorf(r4c.BadSpec, string(Layer), "",
			"a Retry not built with New has no configuration to change")
	}
	if err := c.validate(); err != nil {
		return err
	}
	old := r.cfg.Load() // RetryOn and AbortOn never change: any snapshot has them
	switch {
	case !contract.Same(old.RetryOn, c.RetryOn):
		return notLive("retry.retryOn", contract.Difference(old.RetryOn, c.RetryOn))
	case !contract.Same(old.AbortOn, c.AbortOn):
		return notLive("retry.abortOn", contract.Difference(old.AbortOn, c.AbortOn))
	}
	return nil
}

// notLive is the error of a change to key, a setting made in code only, that differs as
// diff says.
func notLive(key, diff string) error {
	return r4c.Errorf(r4c.NotLive, key, "",
		"set in code only, it cannot change on a running retry (%s): start from the retry's Config to keep it, or build another retry",
		diff)
}

// changed names, sorted, the settings that Reconfigure changes between a and b, by their
// configuration attribute names.
func changed(a, b Config) []string {
	return contract.ChangedAttrs(attrs, &settings{Config: a}, &settings{Config: b})
}
