package retrybudget

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// reconfigure applies c to the running budget, for a registry's reload. c is validated
// as New validates it: an invalid c returns the same *policy.ConfigError and changes
// nothing. Every setting changes at once, for the calls and extra attempts that come
// after it; a new Window keeps the counts of the old one, counted at the time of the
// change. When c differs from the configuration in force, a ConfigChanged event is
// published, whose Changed lists the attributes that changed, sorted; when it is equal,
// nothing is published. It is safe for concurrent use, with calls and with other
// reconfigures (which apply one after the other). The event listener must not reload the
// registry.
func (b *Budget) reconfigure(c Config) error {
	b.mu.Lock()
	changed, err := changes(*b.cur.Load(), c)
	if err != nil || len(changed) == 0 {
		b.mu.Unlock()
		return err
	}
	b.set(c, b.clk.Now())
	b.events.Publish(policy.Event{Kind: policy.ConfigChanged, Changed: changed})
	b.mu.Unlock()
	return nil
}

// checkReconfigure reports the error reconfigure would return for c, without applying
// it. Safe for concurrent use.
func (b *Budget) checkReconfigure(c Config) error {
	return contract.ErrOf(changes(*b.cur.Load(), c))
}

// changes validates c as a new configuration for a budget running with old, and returns
// the attribute names of the settings that change, sorted.
func changes(old, c Config) ([]string, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return contract.ChangedAttrs(attrs, &settings{Config: old}, &settings{Config: c}), nil
}
