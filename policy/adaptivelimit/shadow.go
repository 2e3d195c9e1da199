package adaptivelimit

import (
	"reflect"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// live is the descriptor's Composition.Live: the change of a running limiter to cfg, a
// Config, when it differs from the configuration in force in Shadow alone; false
// otherwise, which a registry's reload refuses with R4C-REG-012 naming the attribute
// that changed: a running limiter changes its shadow mode live and nothing else.
func live(inst contract.Instance, cfg any) (contract.LiveChange, bool) {
	l, ok := inst.(*Limiter)
	c, held := cfg.(Config)
	if !ok || !held || !l.onlyShadow(c) {
		return contract.LiveChange{}, false
	}
	return contract.LiveChange{Check: c.validate, Apply: func() error { return l.setShadow(c) }}, true
}

// onlyShadow reports whether c differs from the configuration in force in Shadow alone,
// or not at all (error lists compared by identity, as errors.Is compares them).
func (l *Limiter) onlyShadow(c Config) bool {
	a, b := l.Config(), c
	a.Shadow, b.Shadow = false, false
	same := contract.Same(a.DropOn, b.DropOn) && contract.Same(a.IgnoreOn, b.IgnoreOn)
	a.DropOn, a.IgnoreOn, b.DropOn, b.IgnoreOn = nil, nil, nil, nil
	return same && reflect.DeepEqual(a, b)
}

// setShadow applies c's Shadow to the running limiter (a registry's reload, once live
// has checked that nothing else changes); a change publishes a ConfigChanged event
// naming "shadow". The calls that arrive after it see it. Safe for concurrent use.
func (l *Limiter) setShadow(c Config) error {
	if l.s.Shadow() == c.Shadow {
		return nil
	}
	l.s.SetShadow(c.Shadow)
	l.events.Publish(policy.Event{Kind: policy.ConfigChanged, At: l.s.Now(), Changed: []string{contract.AttrShadow}})
	return nil
}
