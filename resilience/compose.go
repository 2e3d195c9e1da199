package resilience

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/samber/lo"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/nilcheck"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// composition is the layers of one wrapped function or pipeline, built and in order,
// outermost first, and the registrations of its new instances, made by commit once the
// composition is complete.
type composition struct {
	parts     []part
	registers []func()
}

// commit registers the composition's new instances. Called with r.mu held.
func (c *composition) commit() {
	for _, register := range c.registers {
		register()
	}
}

// part is one layer of a composition: its instance as its spec built it, or the user's
// policy.Policy[T] for a layer added with Use.
type part struct {
	layer policy.Layer
	inst  any
	user  bool
}

// build resolves every spec of a composition of id and orders its layers; the caller
// holds r.mu, composes, and commits the new instances only when all went well. result is the wrapped function's result type, which a
// fallback, a user's policy and a result predicate must match.
//
// decorated lists the layers that have decorators: a layer of another kind cannot be
// composed, and fails the wrap with R4C-REG-010.
func (r *Registry) build(id string, result reflect.Type, specs []Spec, decorated []policy.Layer) (*composition, error) {
	specs = lo.Filter(specs, func(s Spec, _ int) bool { return s != nil })
	var code []policy.Layer // the order named in code, if any
	ordered := false
	seen := map[policy.Layer]bool{}
	var layers []Spec
	waitPermits := false // permitSpec was given
	for _, s := range specs {
		if _, ok := s.(permitSpec); ok {
			waitPermits = true
			continue
		}
		if o, ok := s.(orderSpec); ok {
			if ordered {
				return nil, r4c.Errorf(r4c.BadOrder, "order", orderString(o), "the order is given twice")
			}
			if _, err := checkOrder(o, "order"); err != nil {
				return nil, err // even where a configuration key overrides it
			}
			code, ordered = o, true
			continue
		}
		l := s.layer()
		if seen[l] && l != "" { // a nil or unnamed user policy: its build says so
			return nil, r4c.Errorf(r4c.BadSpec, string(l), id,
				"the %s layer is given twice: each layer may appear once per composition", l)
		}
		seen[l] = true
		layers = append(layers, s)
	}

	if err := roleTaken(id, layers); err != nil {
		return nil, err
	}
	named, orderAt, err := r.order(id, code)
	if err != nil {
		return nil, err
	}
	built := map[policy.Layer]part{}
	var registers []func()
	for _, s := range layers {
		inst, register, err := s.build(r, id, result)
		if err != nil {
			return nil, err
		}
		_, user := s.(interface{ userPolicy() })
		built[s.layer()] = part{layer: s.layer(), inst: inst, user: user}
		if register != nil {
			registers = append(registers, register)
		}
	}
	parts, err := arrange(id, orderAt, named, layers, built)
	if err != nil {
		return nil, err
	}
	bindPermits(parts, waitPermits)
	bindAttempts(parts)
	for _, p := range parts {
		if p.user || slices.Contains(decorated, p.layer) {
			continue
		}
		if err := asyncOnly(id, p.layer); err != nil {
			return nil, err
		}
		return nil, r4c.Errorf(r4c.BadSpec, string(p.layer), id, "the %s layer has no decorators", p.layer)
	}
	return &composition{parts: parts, registers: registers}, nil
}

// roleTaken refuses a composition of id with two layers of one role (their descriptors'
// Role), with the code and reason of the role that gives them.
func roleTaken(id string, specs []Spec) error {
	for _, s := range specs {
		r := contract.CompositionOf(s.layer()).Role
		if r.Name == "" || r.Code == "" {
			continue
		}
		for _, o := range specs {
			if o.layer() != s.layer() && contract.CompositionOf(o.layer()).Role.Name == r.Name {
				return r4c.Errorf(r.Code, string(s.layer()), id, "%s", r.Reason)
			}
		}
	}
	return nil
}

// arrange puts the built layers in order, outermost first: the layers whose descriptor
// makes them outermost (the fallback), in the default order; then the layers named, in
// the order named; then the other built-in layers, in the default order; then the other
// user layers, in the order of their specs. A name in the order that is neither
// a built-in layer nor a layer of this composition is R4C-REG-011.
func arrange(id, key string, named []policy.Layer, specs []Spec, built map[policy.Layer]part) ([]part, error) {
	known := defaultOrder()
	for _, l := range named {
		if _, ok := built[l]; !ok && !slices.Contains(known, l) {
			return nil, r4c.Errorf(r4c.BadOrder, key, orderString(named),
				"the order names %q, which is neither a built-in layer (%s) nor a layer of the composition of %s",
				clip(l), orderString(known), id)
		}
	}
	out := make([]part, 0, len(built))
	place := func(l policy.Layer) {
		if p, ok := built[l]; ok && !slices.ContainsFunc(out, func(q part) bool { return q.layer == l }) {
			out = append(out, p)
		}
	}
	lo.ForEach(known, func(l policy.Layer, _ int) {
		if contract.CompositionOf(l).Outermost {
			place(l) // wherever the order names it
		}
	})
	lo.ForEach(named, func(l policy.Layer, _ int) { place(l) })
	lo.ForEach(known, func(l policy.Layer, _ int) { place(l) })
	lo.ForEach(specs, func(s Spec, _ int) { place(s.layer()) })
	return out, nil
}

// order returns the order named for the composition of id, and where it was named: the
// key instances.<id>.composition.order, else the order given in code ("order"), else the
// key defaults.composition.order, else none. A layer named twice is R4C-REG-011. Called
// with r.mu held.
func (r *Registry) order(id string, code []policy.Layer) ([]policy.Layer, string, error) {
	key := scopeInstances + "." + id + "." + orderKey
	v, ok := r.props.value(scopeInstances+"."+id, compositionSegment, orderAttr)
	switch {
	case ok:
	case code != nil:
		return code, "order", nil
	default:
		key = scopeDefaults + "." + orderKey
		if v, ok = r.props.value(scopeDefaults, compositionSegment, orderAttr); !ok {
			return nil, "", nil
		}
	}
	layers, err := parseOrder(v)
	if err != nil {
		return nil, key, withKey(err, key)
	}
	return layers, key, nil
}

// checkOrder refuses an order that names a layer twice or names an empty layer, with
// R4C-REG-011.
func checkOrder(layers []policy.Layer, key string) ([]policy.Layer, error) {
	seen := make(map[policy.Layer]struct{}, len(layers))
	for _, l := range layers {
		if l == "" {
			return nil, r4c.Errorf(r4c.BadOrder, key, orderString(layers), "the order names an empty layer")
		}
		if _, dup := seen[l]; dup {
			return nil, r4c.Errorf(r4c.BadOrder, key, orderString(layers), "the order names the %s layer twice", clip(l))
		}
		seen[l] = struct{}{}
	}
	return layers, nil
}

// clip returns a layer name for a message: as is up to 64 bytes, else its start, an
// ellipsis and its length, so that a message never repeats a huge input in full.
func clip(l policy.Layer) string {
	const most = 64
	if len(l) <= most {
		return string(l)
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(l[:most]), ""), len(l))
}

// orderString writes an order as its configuration key's value does.
func orderString(layers []policy.Layer) string {
	return strings.Join(lo.Map(layers, func(l policy.Layer, _ int) string { return string(l) }), ", ")
}

// parseOrder splits the value of a composition.order key: layer names separated by
// commas, spaces around them ignored. A layer named twice or an empty name is
// R4C-REG-011.
func parseOrder(v string) ([]policy.Layer, error) {
	layers := lo.Map(strings.Split(v, ","), func(s string, _ int) policy.Layer { return policy.Layer(strings.TrimSpace(s)) })
	if _, err := checkOrder(layers, ""); err != nil {
		return nil, withValue(err, v)
	}
	return layers, nil
}

// Order names the order of a composition's layers, outermost first: e.g.
// Order(timeout.Layer, retry.Layer) puts one timeout around all the attempts
// of the retry together, where the default order gives each attempt its own timeout. Layers the order
// does not name keep their default order after (inside) the named ones, and a user's
// layers that are not named go innermost, in the order of their specs. The fallback is
// always outermost, wherever it is named. Naming a built-in layer that the composition
// does not use is allowed, so one order may serve many functions.
//
// The configuration key instances.<id>.composition.order (e.g. "timeout, retry") wins over
// Order, which wins over defaults.composition.order. A layer named twice, an empty name,
// or a name that is neither a built-in layer nor a layer of the composition fails the
// wrap with R4C-REG-011; giving Order twice in one composition fails the same way. As
// defaults.composition.order applies to every composition, it may name built-in layers
// only: NewRegistry refuses another name with R4C-REG-011.
func Order(layers ...policy.Layer) Spec { return orderSpec(append([]policy.Layer{}, layers...)) }

type orderSpec []policy.Layer

func (orderSpec) layer() policy.Layer { return "" }

func (orderSpec) build(*Registry, string, reflect.Type) (any, func(), error) { return nil, nil, nil }

// Use adds p, a user's policy, to a composition, at its layer p.Layer(): a name of the
// user's choosing, other than the built-in layers' and observe.LayerCall. Without an Order that names it, it
// goes innermost, next to the function. p's Decorate and DecorateAsync are called once,
// when the function is wrapped, while the registry builds the composition (so they must
// not wrap functions of the same registry), must not return nil (R4C-REG-010), and the
// calls they return must pass on the context they are given (or one derived from it) to
// the call they decorate.
//
// T must be the wrapped function's result type. A nil p, a layer name that is empty or
// taken by a built-in policy, or another result type fails the wrap with R4C-REG-010.
//
// Calls through a user's layer cost what p's decorators cost; for functions of one or
// more arguments (Wrap1, Wrap2, WrapAsync1, pipelines) the arguments travel to the layers
// inside it in the call's context, which costs up to two allocations per call. Functions of no
// argument (Wrap, WrapAsync) pay nothing for it. A policy that does not pass on its
// context to the call it decorates makes that call fail with the error "resilience: a
// policy given to Use did not pass on the context it was given" (for functions of no
// argument it only loses the context's values).
func Use[T any](p policy.Policy[T]) Spec { return userSpec[T]{p: p} }

type userSpec[T any] struct{ p policy.Policy[T] }

func (userSpec[T]) userPolicy() {}

func (u userSpec[T]) layer() policy.Layer {
	if nilcheck.Is(u.p) {
		return ""
	}
	return u.p.Layer()
}

func (u userSpec[T]) build(_ *Registry, wrapID string, result reflect.Type) (any, func(), error) {
	switch l := u.layer(); {
	case nilcheck.Is(u.p):
		return nil, nil, r4c.Errorf(r4c.BadSpec, "use", wrapID, "the policy given to Use is nil")
	case l == "":
		return nil, nil, r4c.Errorf(r4c.BadSpec, "use", wrapID, "the policy given to Use has an empty layer name")
	case slices.Contains(defaultOrder(), l) || registered(l) || l == observe.LayerCall:
		return nil, nil, r4c.Errorf(r4c.BadSpec, "use", wrapID,
			"the policy given to Use names the layer %q, which a built-in policy has or the registry keeps for whole calls: choose another name", l)
	case result != reflect.TypeFor[T]():
		return nil, nil, r4c.Errorf(r4c.BadSpec, "use", wrapID,
			"the policy given to Use decorates calls returning %v but the function returns %v", reflect.TypeFor[T](), result)
	}
	return u.p, nil, nil
}

func registered(l policy.Layer) bool {
	_, ok := contract.Lookup(l)
	return ok
}

// rows returns the layer table for calls of argument A and result T, with extra rows
// after the built-in ones, and the layers that have decorators of the shape asked for:
// sync, or async (every layer).
func rows[A, T any](extra []layerRow[A, T], sync bool) ([]layerRow[A, T], []policy.Layer) {
	rs := append(layerTable[A, T](), extra...)
	return rs, lo.FilterMap(rs, func(r layerRow[A, T], _ int) (policy.Layer, bool) { return r.layer, !sync || r.sync != nil })
}

// compose returns fn decorated by every layer of c, innermost first: F is a sync call
// (decorate.Func) or an async one (decorate.AsyncFunc), dec applies a table row's decorator
// of that shape, user applies a user's policy. Every layer of c has its row in rs.
func compose[A, T, F any](c *composition, rs []layerRow[A, T], fn F, dec func(layerRow[A, T], any, F) F, user func(policy.Policy[T], F) (F, error), guard func(F) F) (F, error) {
	if len(c.parts) == 0 {
		return guard(fn), nil
	}
	h := fn
	for _, p := range slices.Backward(c.parts) {
		if p.user {
			var err error
			if h, err = user(p.inst.(policy.Policy[T]), h); err != nil {
				return h, err
			}
			continue
		}
		h = dec(rs[slices.IndexFunc(rs, func(r layerRow[A, T]) bool { return r.layer == p.layer })], p.inst, h)
	}
	return h, nil
}

// assemble builds the composition of specs around fn for the composition of id (none
// with an error); observe wraps the composed call so that the registry's observer, if
// any, records each whole call (observeSync or observeAsync).
func assemble[A, T, F any](r *Registry, id string, specs []Spec, extra []layerRow[A, T], sync bool, fn F,
	dec func(layerRow[A, T], any, F) F, user func(policy.Policy[T], F) (F, error), guard func(F) F,
	observe func(*whole, F) F) (F, error) {
	rs, layers := rows(extra, sync)
	var h F
	err := r.assembleWith(id, reflect.TypeFor[T](), specs, layers, func(c *composition) (err error) {
		if h, err = compose(c, rs, fn, dec, user, guard); err != nil {
			return err
		}
		h = observe(newWhole(r.callRecorder(id), r.clk, c), h)
		return nil
	})
	if err != nil {
		var none F
		return none, err
	}
	return h, nil
}

// assembleWith builds the composition of id and gives it to finish, which decorates the
// calls; the new instances are registered only once finish succeeds, so a failed wrap,
// or a user's policy whose Decorate panics, leaves nothing behind. It holds the
// registry's lock throughout. An error of finish is R4C-REG-010.
func (r *Registry) assembleWith(id string, result reflect.Type, specs []Spec, layers []policy.Layer, finish func(*composition) error) error {
	if r == nil {
		return r4c.Errorf(r4c.BadSpec, "", id, "the registry is nil: make one with NewRegistry")
	}
	if id == "" {
		// No configuration key can name it (instances..<policy> is refused), and its
		// policies would take their kinds' default ids, which the registry does not use.
		return r4c.Errorf(r4c.BadSpec, "", "", `the instance id is empty: give the function an id, by convention Type.Method (e.g. "SearchAPI.Search")`)
	}
	var events []policy.Event // the overrides a locked spec ignores, published once unlocked
	defer func() { r.publish(events) }()
	r.reloadMu.RLock() // no Reload applies its changes meanwhile
	defer r.reloadMu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.props.forget(false) // what a reload resolved is not this wrap's
	committed := false
	defer func() { r.props.forget(!committed) }() // a failed wrap uses no key
	c, err := r.build(id, result, specs, layers)
	if err != nil {
		return err
	}
	if err := finish(c); err != nil {
		return r4c.Errorf(r4c.BadSpec, "use", id, "%v", err)
	}
	c.commit()
	events = r.noteOverruled(r.added(), r.overruled)
	committed = true
	return nil
}

func decSync[A, T any](r layerRow[A, T], inst any, next decorate.Func[A, T]) decorate.Func[A, T] {
	return r.sync(inst, next)
}

func decAsync[A, T any](r layerRow[A, T], inst any, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] {
	return r.async(inst, next)
}

// argsKey is the context key under which the arguments of a call cross a user's layer,
// in an argsBox (so that a nil interface argument arrives as well).
type argsKey[A any] struct{}

type argsBox[A any] struct{ a A }

// errContextDropped is the error of a call through a policy given to Use that did not
// pass on the context it was given to the call it decorates: the layers inside it cannot
// find the call's arguments.
var errContextDropped = errors.New("resilience: a policy given to Use did not pass on the context it was given")

// noArgs reports whether A is struct{}: calls without arguments need not carry them.
func noArgs[A any]() bool { return reflect.TypeFor[A]() == reflect.TypeFor[struct{}]() }

// errNilCall is the error of a user's policy whose Decorate or DecorateAsync returned
// nil.
var errNilCall = errors.New("the policy given to Use returned a nil call from Decorate or DecorateAsync")

// userSync applies a user's policy to a sync call.
func userSync[A, T any](p policy.Policy[T], next decorate.Func[A, T]) (decorate.Func[A, T], error) {
	carry := !noArgs[A]()
	call := p.Decorate(func(ctx context.Context) (T, error) {
		a, ok := argsIn[A](ctx, carry)
		if !ok {
			var zero T
			return zero, errContextDropped
		}
		return next(ctx, a)
	})
	if call == nil {
		return nil, errNilCall
	}
	return func(ctx context.Context, a A) (T, error) {
		if err := decorate.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		return call(withArgs(ctx, a, carry))
	}, nil
}

// userAsync applies a user's policy to an async call.
func userAsync[A, T any](p policy.Policy[T], next decorate.AsyncFunc[A, T]) (decorate.AsyncFunc[A, T], error) {
	carry := !noArgs[A]()
	call := p.DecorateAsync(func(ctx context.Context) *async.Future[T] {
		a, ok := argsIn[A](ctx, carry)
		if !ok {
			return async.Failed[T](errContextDropped)
		}
		return next(ctx, a)
	})
	if call == nil {
		return nil, errNilCall
	}
	return func(ctx context.Context, a A) *async.Future[T] {
		if err := decorate.ContextErr(ctx); err != nil {
			return async.Failed[T](err)
		}
		return orFailed(call(withArgs(ctx, a, carry)))
	}, nil
}

// withArgs returns ctx carrying a across a user's layer, when carry is set (noArgs is
// false); ctx itself otherwise.
func withArgs[A any](ctx context.Context, a A, carry bool) context.Context {
	if !carry {
		return ctx
	}
	return context.WithValue(ctx, argsKey[A]{}, argsBox[A]{a})
}

// argsIn returns the arguments that withArgs put in ctx, and false when ctx does not
// carry them (the user's policy did not pass on the context it was given); the zero A
// when carry is not set.
func argsIn[A any](ctx context.Context, carry bool) (A, bool) {
	if !carry {
		var zero A
		return zero, true
	}
	b, ok := ctx.Value(argsKey[A]{}).(argsBox[A])
	return b.a, ok
}

// orFailed returns f, or a future failed with async.ErrNilFuture for a nil f, so that a
// composition never hands a nil future to its caller.
func orFailed[T any](f *async.Future[T]) *async.Future[T] {
	if f == nil {
		return async.Failed[T](async.ErrNilFuture)
	}
	return f
}
