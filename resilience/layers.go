package resilience

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/permitgate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// layerTable is the table of built-in layers, with the decorators of each for calls of
// argument A and result T, in no particular order: the default order is the layers'
// ranks (defaultOrder). A new policy adds its row here, and its spec function (spec.go):
// those are the lines it needs outside its own package. Everything else about it (its
// place in the order, the calls it guards, configuration keys, instances, handles,
// snapshots, events, live changes) goes through the descriptor its package registers. A
// layer that guards only calls returning a future has no sync decorator;
// its descriptor gives the code of the error that refuses it in a synchronous
// composition.
func layerTable[A, T any]() []layerRow[A, T] {
	return []layerRow[A, T]{
		row(fallback.Layer, fallback.Decorate[decorate.Func[A, T], A, T], fallback.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(retry.Layer, retry.Decorate[decorate.Func[A, T], A, T], retry.Decorate[decorate.AsyncFunc[A, T], A, T]),
		asyncRow(hedge.Layer, hedge.DecorateAsyncFunc[A, T]),
		row(circuitbreaker.Layer, circuitbreaker.Decorate[decorate.Func[A, T], A, T], circuitbreaker.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(ratelimit.Layer, permitgate.DecorateFunc[A, T], permitgate.DecorateAsyncFunc[A, T]),
		row(timeout.Layer, timeout.Decorate[decorate.Func[A, T], A, T], timeout.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(bulkhead.Layer, bulkhead.Decorate[decorate.Func[A, T], A, T], bulkhead.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(adaptivelimit.Layer, adaptivelimit.Decorate[decorate.Func[A, T], A, T], adaptivelimit.Decorate[decorate.AsyncFunc[A, T], A, T]),
	}
}

// layerRow is one layer of the table: its name and its generic decorators, sync and
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
// fallback, retry, hedge, circuitBreaker, rateLimiter, timeout, bulkhead, adaptiveLimit.
// The function is innermost, after the last of them. The order is that of the ranks the
// policies' descriptors give; it is written nowhere else. It returns a new slice on each
// call.
func defaultOrder() []policy.Layer { return contract.Ranked() }
