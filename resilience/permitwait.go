package resilience

import (
	"reflect"
	"slices"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/permitwait"
	"github.com/resilience4go/resilience4go/policy"
)

// permitSpec makes the composition's retry wait, after an attempt that the composition's
// rate limiter refused, until that limiter's next permit (at least its own delay),
// whatever the retry's waitForPermit setting says: as retry.WaitForPermit(true) does, for
// this composition only, even for a retry shared by name with other compositions, and
// whatever a configuration key or a Reload sets. A composition without a retry or without
// a rate limiter ignores it; giving it twice is giving it once. The client adapters give
// it through permitwait.Spec.
//
// Without it, the retry's own setting decides (the key retry.waitForPermit, default
// false). Either way, a retry in a composition waits only for its own composition's rate
// limiter: a rejection from any other limiter (one inside the wrapped function, say) is
// retried after the retry's own delay.
type permitSpec struct{}

func (permitSpec) layer() policy.Layer { return "" }

func (permitSpec) build(*Registry, string, reflect.Type) (any, func(), error) { return nil, nil, nil }

func init() { permitwait.Spec = func() any { return permitSpec{} } }

// bindPermits binds the layer of parts that waits for permits (the retry: its
// descriptor's BindPermits), if any, to the composition's layer that gives them (the rate
// limiter: GivesPermits), or to none when there is none, so that it waits only for that
// layer's permits; always makes it wait for them whatever its configuration says
// (permitSpec). The registered instance is unchanged: the composition decorates
// its calls with the bound instance, which shares the instance's configuration, live
// changes and events.
func bindPermits(parts []part, always bool) {
	i := slices.IndexFunc(parts, func(p part) bool { return !p.user && contract.CompositionOf(p.layer).BindPermits != nil })
	if i < 0 {
		return
	}
	waiter := parts[i].inst
	src := contract.PermitSource{Always: always}
	if j := slices.IndexFunc(parts, func(p part) bool { return !p.user && contract.CompositionOf(p.layer).GivesPermits }); j >= 0 {
		src.Limiter, _ = contract.IDOf(parts[j].layer, parts[j].inst)
		if rej := contract.CompositionOf(parts[j].layer).Rejection; rej != nil {
			src.Rejection = rej(parts[j].inst) // this limiter, not another of the same id
		}
	}
	if bound, ok := contract.CompositionOf(parts[i].layer).BindPermits(waiter, src); ok {
		parts[i].inst = bound
	}
}
