package resilience

import (
	"cmp"
	"maps"
	"slices"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// RateLimiter returns the read-only handle of the rate limiter with this id, once a
// function using it was wrapped or its pipeline built. An unknown id fails with
// R4C-REG-009. It is Lookup[ratelimit.Handle](r, ratelimit.Layer, id).
func (r *Registry) RateLimiter(id string) (ratelimit.Handle, error) {
	return Lookup[ratelimit.Handle](r, ratelimit.Layer, id)
}

// Lookup returns the instance of layer l with this id, as a P, once a function using it
// was wrapped or its pipeline built: the instance of any policy, as its package's type,
// e.g. Lookup[*circuitbreaker.Breaker](r, circuitbreaker.Layer, "SearchAPI.Search") or
// Lookup[*retry.Retry](r, retry.Layer, "SearchAPI.Search"). An unknown id, or an instance
// that is not a P, fails with R4C-REG-009. A nil registry fails the same way. It is safe
// for concurrent use.
func Lookup[P any](r *Registry, l policy.Layer, id string) (P, error) {
	var zero P
	if r == nil {
		return zero, unknownInstance(l, id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.instances[instanceKey{l, id}].(P)
	if !ok {
		return zero, unknownInstance(l, id)
	}
	return p, nil
}

func unknownInstance(l policy.Layer, id string) error {
	return &policy.ConfigError{Code: r4c.UnknownInstance, Key: string(l), Value: id,
		Reason: "no instance with this id: it exists once a function using it is wrapped or its pipeline built"}
}

// Snapshot is the state of every instance of a registry that has one.
type Snapshot struct {
	// RateLimiters holds the state of every rate limiter, sorted by id; empty, not nil,
	// when there is none.
	RateLimiters []ratelimit.Snapshot
	// Policies holds the state of every instance of every layer that has one (the rate
	// limiters included), sorted by layer, then id.
	Policies []PolicySnapshot
}

// PolicySnapshot is the state of one policy instance: its layer, its id and the
// snapshot its package defines (e.g. a ratelimit.Snapshot or a circuitbreaker.Snapshot).
type PolicySnapshot struct {
	Layer policy.Layer // the instance's layer, e.g. circuitbreaker.Layer
	ID    string       // the instance id
	// State is the snapshot, a value of the type its package defines (not a pointer):
	// a type assertion such as State.(circuitbreaker.Snapshot), or a type switch, reads it.
	State any
}

// Snapshot returns the state of every instance that has one; none for a nil registry.
// Each instance's state is read while the registry's lock is held, one instance after
// another: the states of two instances are not of one instant.
func (r *Registry) Snapshot() Snapshot {
	if r == nil {
		return Snapshot{RateLimiters: []ratelimit.Snapshot{}}
	}
	r.mu.Lock()
	keys := slices.SortedFunc(maps.Keys(r.instances), func(a, b instanceKey) int {
		return cmp.Or(cmp.Compare(a.layer, b.layer), cmp.Compare(a.id, b.id))
	})
	var out Snapshot
	for _, key := range keys {
		k, ok := contract.Lookup(key.layer)
		if !ok {
			continue
		}
		state := k.Snapshot(r.instances[key])
		if state == nil {
			continue
		}
		out.Policies = append(out.Policies, PolicySnapshot{Layer: key.layer, ID: key.id, State: state})
	}
	r.mu.Unlock()
	out.RateLimiters = statesOf[ratelimit.Snapshot](out)
	return out
}

// statesOf returns the states of type S in s.Policies, in their order (by layer, then
// id); empty, not nil, when there is none.
func statesOf[S any](s Snapshot) []S {
	return lo.FilterMap(s.Policies, func(p PolicySnapshot, _ int) (S, bool) {
		st, ok := p.State.(S)
		return st, ok
	})
}
