package resilience

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// layerRow is one layer of the table (layerTable, builtins.go): its name and its generic decorators, sync and
// async, taking the instance as built by the layer's spec.
type layerRow[A, T any] struct {
	layer policy.Layer
	sync  func(inst any, next decorate.Func[A, T]) decorate.Func[A, T] // nil: async only
	async func(inst any, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T]
}

// row makes the row of layer l from its decorators of instances of type P.
func row[P, A, T any](l policy.Layer, sync func(P, decorate.Func[A, T]) decorate.Func[A, T], async func(P, decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T]) layerRow[A, T] {
	r := asyncRow(l, async)
	r.sync = func(inst any, next decorate.Func[A, T]) decorate.Func[A, T] { return sync(inst.(P), next) }
	return r
}

// asyncRow makes the row of layer l, which guards only calls returning a future, from its
// async decorator of instances of type P.
func asyncRow[P, A, T any](l policy.Layer, async func(P, decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T]) layerRow[A, T] {
	return layerRow[A, T]{
		layer: l,
		async: func(inst any, next decorate.AsyncFunc[A, T]) decorate.AsyncFunc[A, T] { return async(inst.(P), next) },
	}
}

// asyncOnly returns the error that refuses layer l in a synchronous composition of id,
// when its descriptor says it guards only calls returning a future; nil otherwise.
func asyncOnly(id string, l policy.Layer) error {
	code := contract.CompositionOf(l).AsyncOnly
	if code == "" {
		return nil
	}
	return r4c.Errorf(code, string(l), id,
		"the %s layer guards calls that return a future: wrap the function with WrapAsync (e.g. around async.Go) or call the pipeline's ExecuteAsync", l)
}

// defaultOrder returns the built-in layers in their default order, outermost first:
// fallback, retryBudget, retry, hedge, circuitBreaker, rateLimiter, timeout, bulkhead,
// adaptiveLimit.
// The function is innermost, after the last of them. The order is that of the ranks the
// policies' descriptors give; it is written nowhere else. It returns a new slice on each
// call.
func defaultOrder() []policy.Layer { return contract.Ranked() }
