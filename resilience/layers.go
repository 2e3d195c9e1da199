package resilience

import (
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

// layerTable is the table of built-in layers, in their default order, outermost first,
// with the decorators of each for calls of argument A and result T. A new policy adds its
// row here, at its place in the default order: that is the one line it needs outside its
// own package. Everything else about it (configuration keys, instances, handles,
// snapshots, events) goes through the descriptor its package registers, and users reach
// it with Policy(its options...). A layer that guards only calls returning a future (the
// hedge) has no sync decorator.
func layerTable[A, T any]() []layerRow[A, T] {
	return []layerRow[A, T]{
		row(policy.LayerFallback, fallback.DecorateFunc[A, T], fallback.DecorateAsyncFunc[A, T]),
		row(policy.LayerRetry, retry.DecorateFunc[A, T], retry.DecorateAsyncFunc[A, T]),
		row(policy.LayerHedge, nil, hedge.DecorateAsyncFunc[A, T]),
		row(policy.LayerCircuitBreaker, circuitbreaker.DecorateFunc[A, T], circuitbreaker.DecorateAsyncFunc[A, T]),
		row(policy.LayerRateLimiter, ratelimit.DecorateFunc[A, T], ratelimit.DecorateAsyncFunc[A, T]),
		row(policy.LayerTimeout, timeout.DecorateFunc[A, T], timeout.DecorateAsyncFunc[A, T]),
		row(policy.LayerBulkhead, bulkhead.DecorateFunc[A, T], bulkhead.DecorateAsyncFunc[A, T]),
		row(policy.LayerAdaptiveLimit, adaptivelimit.DecorateFunc[A, T], adaptivelimit.DecorateAsyncFunc[A, T]),
	}
}

// layerRow is one layer of the table: its name and its generic decorators, sync and
// async, taking the instance as built by the layer's spec.
type layerRow[A, T any] struct {
	layer policy.Layer
	sync  func(inst any, next policy.Func[A, T]) policy.Func[A, T]
	async func(inst any, next policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T]
}

// row makes the row of layer l from its decorators of instances of type P; sync is nil
// for a layer that guards only calls returning a future.
func row[P, A, T any](l policy.Layer, sync func(P, policy.Func[A, T]) policy.Func[A, T], async func(P, policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T]) layerRow[A, T] {
	r := layerRow[A, T]{
		layer: l,
		async: func(inst any, next policy.AsyncFunc[A, T]) policy.AsyncFunc[A, T] { return async(inst.(P), next) },
	}
	if sync != nil {
		r.sync = func(inst any, next policy.Func[A, T]) policy.Func[A, T] { return sync(inst.(P), next) }
	}
	return r
}

// DefaultOrder returns the built-in layers in their default order, outermost first:
// fallback, retry, hedge, circuitBreaker, rateLimiter, timeout, bulkhead, adaptiveLimit.
// The function is innermost, after the last of them. A composition has a retry or a
// hedge, never both: the hedge takes the retry's place.
func DefaultOrder() []policy.Layer {
	rows := layerTable[struct{}, struct{}]()
	out := make([]policy.Layer, len(rows))
	for i, r := range rows {
		out[i] = r.layer
	}
	return out
}
