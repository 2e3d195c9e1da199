package contract

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// Composition is how a policy takes part in a composition of package resilience and in
// its reloads: its place in the default order, the calls it guards, the role that only
// one of its layers may play, how a running instance takes a new configuration, the permits it
// gives or waits for, and the attempts it limits or asks for. The zero Composition is a
// layer with no place in the default order (it goes inside the ranked layers, in the
// order of its spec), that guards every call, plays no exclusive role, keeps the
// configuration it was built with and has nothing to do with permits or attempts.
type Composition struct {
	// Rank is the layer's place in the default order, outermost first: a lower rank is
	// further out. Ranks are distinct; the built-in layers use multiples of ten, so that a
	// new one finds room between two of them. Zero: no place in the default order.
	Rank int
	// Outermost places the layer outside every other one, wherever an order names it.
	Outermost bool
	// AsyncOnly, when set, says that the layer guards only calls that return a future: it
	// is the R4C code of the error that refuses the layer in a composition of synchronous
	// calls.
	AsyncOnly string
	// Role, when its Name is set, is what the layer does in a composition that one layer
	// at most may do: the retry and the hedge both start a call's attempts. A composition
	// with two layers of one role is refused with the Code and Reason of the role of the
	// layer that has them.
	Role Role
	// Live returns the change of a running instance of the layer to cfg, a configuration
	// as the descriptor's Config returns it; false when inst cannot take it live. Nil:
	// an instance keeps the configuration it was built with. LiveAs and LiveValid make it.
	Live func(inst Instance, cfg any) (LiveChange, bool)
	// BindPermits, when set, says that the layer can wait for the permits of another layer
	// of its composition: it returns inst bound to src (inst itself, and false, when inst
	// is not one of the layer's instances). Nil: the layer waits for no permit.
	BindPermits func(inst Instance, src PermitSource) (Instance, bool)
	// GivesPermits says that the layer's rejections tell when its next permit comes
	// (nextpermit.Error): a layer of the same composition with BindPermits waits for it.
	GivesPermits bool
	// LimitsAttempts, when set, says that the layer limits the attempts after the first
	// that its composition's layer of RoleAttempts starts: it returns inst's gate, which
	// that layer asks before each (false when inst is not one of the layer's instances).
	// Nil: the layer limits no attempt.
	LimitsAttempts func(inst Instance) (AttemptGate, bool)
	// BindAttempts, when set (on a layer of RoleAttempts), returns inst bound to gate: the
	// same instance in all else (id, configuration, live changes, events), that asks gate
	// before each attempt after the first (inst itself, and false, when inst is not one of
	// the layer's instances). The registered instance is unchanged.
	BindAttempts func(inst Instance, gate AttemptGate) (Instance, bool)
	// Rejection returns, for a layer that GivesPermits, the instance's own rejection
	// error, which tells its rejections from those of another instance of the same id.
	// Nil: the instance id decides.
	Rejection func(inst Instance) error
}

// RoleAttempts is the role of a layer that starts a call's attempts (the retry, the
// hedge): a composition has one such layer at most.
const RoleAttempts = "attempts"

// Role is a part of a composition that one layer at most may play, and the error that
// refuses a composition with a second layer of the same role.
type Role struct {
	Name   string // e.g. "attempts"; "" for none
	Code   string // the R4C code of the error; "": the other layer's role gives it
	Reason string // the error's reason, in words
}

// AttemptGate limits the attempts after the first of the calls of a composition (a
// retry's retries, a hedge's hedges): the layer that starts them asks it before each. It
// is safe for concurrent use.
type AttemptGate interface {
	// TryAttempt reports whether attempt (2 or more) of a call whose context is ctx may
	// start, by the layer by whose instance id is id, and counts it when it may; it
	// returns when it counted it, on the gate's clock, for ReturnAttempt (negative when it
	// counted nothing). When it may not, it counts nothing and publishes its refusal with
	// ctx.
	TryAttempt(ctx context.Context, by policy.Layer, id string, attempt int) (at time.Duration, ok bool)
	// ReturnAttempt gives back an attempt that TryAttempt counted at at and that was not
	// started after all (the call's context ended during the wait before it).
	ReturnAttempt(at time.Duration)
}

// PermitSource says whose rejections set the wait of a layer that waits for permits: the
// instance id of the composition's layer that gives permits ("" for none), its own
// rejection error when it has one (nil: the id decides), and whether to wait for its
// permits whatever the waiting layer's configuration says.
type PermitSource struct {
	Limiter   string // the instance id of the layer that gives permits
	Rejection error  // that instance's own rejection error, or nil
	Always    bool   // wait for its permits whatever the configuration says
}

// LiveChange is the change of a running instance to a new configuration: Check says
// whether it can take it, changing nothing; Apply makes the change.
type LiveChange struct {
	Check, Apply func() error
}

// reconfigurer is a running instance whose configuration, of type C, can change: the
// policy's Reconfigure, and CheckReconfigure, which reports Reconfigure's error without
// changing anything.
type reconfigurer[C any] interface {
	CheckReconfigure(c C) error
	Reconfigure(c C) error
}

// validReconfigurer is a running instance whose Reconfigure fails only for a
// configuration that its Validate refuses.
type validReconfigurer[C interface{ Validate() error }] interface {
	Reconfigure(c C) error
}

// LiveAs is a Composition.Live for an instance that takes configurations of type C live,
// with CheckReconfigure and Reconfigure methods: the change of inst to cfg when inst has
// them and cfg holds a C (itself, or the Config of a Shared[C], whose predicate, set in
// code, a reload does not change).
func LiveAs[C any](inst Instance, cfg any) (LiveChange, bool) {
	rc, ok := inst.(reconfigurer[C])
	c, held := configIn[C](cfg)
	if !ok || !held {
		return LiveChange{}, false
	}
	return LiveChange{
		Check: func() error { return rc.CheckReconfigure(c) },
		Apply: func() error { return rc.Reconfigure(c) },
	}, true
}

// LiveValid is LiveAs that also takes an instance without CheckReconfigure, whose
// Reconfigure fails only for an invalid configuration: the check is then C's Validate.
func LiveValid[C interface{ Validate() error }](inst Instance, cfg any) (LiveChange, bool) {
	if c, ok := LiveAs[C](inst, cfg); ok {
		return c, true
	}
	rc, ok := inst.(validReconfigurer[C])
	c, held := configIn[C](cfg)
	if !ok || !held {
		return LiveChange{}, false
	}
	return LiveChange{
		Check: c.Validate,
		Apply: func() error { return rc.Reconfigure(c) },
	}, true
}

// configIn returns the configuration of type C that cfg holds: cfg itself, or the Config
// of a Shared[C].
func configIn[C any](cfg any) (C, bool) {
	switch v := cfg.(type) {
	case C:
		return v, true
	case Shared[C]:
		return v.Config, true
	}
	var zero C
	return zero, false
}

// CompositionOf returns the Composition of the kind of layer l; the zero Composition when
// no kind is registered for l (a user's layer).
func CompositionOf(l policy.Layer) Composition {
	if k, ok := Lookup(l); ok {
		return k.Composition()
	}
	return Composition{}
}

// Ranked returns the layers of the registered kinds that have a rank, by rank, lowest
// (outermost) first; two of equal rank by name.
func Ranked() []policy.Layer {
	var ranked []Kind
	for _, k := range All() {
		if k.Composition().Rank != 0 {
			ranked = append(ranked, k)
		}
	}
	slices.SortStableFunc(ranked, func(a, b Kind) int { return cmp.Compare(a.Composition().Rank, b.Composition().Rank) })
	out := make([]policy.Layer, len(ranked))
	for i, k := range ranked {
		out[i] = k.Layer()
	}
	return out
}
