package contract

// Live is a Composition.Live for instances of type P whose configuration, of type C,
// changes while they run: check reports the error apply would return for a
// configuration, changing nothing, and apply makes the change. The change of inst to cfg
// is there when inst is a P and cfg holds a C (itself, or the Config of a Shared[C],
// whose predicate, set in code, a reload does not change). The policy's own methods,
// unexported, do the work: a reload reaches them through its descriptor only.
func Live[P Instance, C any](check, apply func(P, C) error) func(inst Instance, cfg any) (LiveChange, bool) {
	return func(inst Instance, cfg any) (LiveChange, bool) {
		p, ok := inst.(P)
		c, held := configIn[C](cfg)
		if !ok || !held {
			return LiveChange{}, false
		}
		return LiveChange{
			Check: func() error { return check(p, c) },
			Apply: func() error { return apply(p, c) },
		}, true
	}
}
