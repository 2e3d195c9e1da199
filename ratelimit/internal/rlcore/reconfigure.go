package rlcore

import (
	"sync"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// Reconfigure is what a limiter's Reconfigure does, the limiter's own part left to cur
// and change. A limiter never built (b has no clock) is R4C-REG-010, its message naming
// it as limiter ("Limiter", "keyed Limiter"). c is validated with every field given (a 0
// is a wrong value, not one never set): an invalid c returns its *policy.ConfigError and
// changes nothing. Then, under mu, which serializes the changes: a c equal to the
// configuration of cur(), the rate in force, changes nothing; otherwise change derives
// the rate of c, converts the limiter's schedules from old to it (Base.ConvertAll) and
// stores it, and a ConfigChanged event naming the changed settings is published through
// ev.
func (b *Base) Reconfigure(limiter string, c Config, mu *sync.Mutex, ev *contract.Events,
	cur func() *Rate, change func(old *Rate, c Config)) error {
	if b.Clk == nil {
		return r4c.Errorf(r4c.BadSpec, "rateLimiter", "",
			"a zero %s, never built with New, has no configuration to change", limiter)
	}
	if err := Validate(c, All); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	old := cur()
	if old.Cfg == c {
		return nil
	}
	change(old, c)
	if ev.Observed() {
		ev.Publish(policy.Event{Kind: policy.ConfigChanged, At: b.Clk.Now(), Changed: Changed(old.Cfg, c)})
	}
	return nil
}
