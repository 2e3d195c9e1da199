package ratelimit_test

import (
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// localShare4 is a backend whose stores always answer Local, at a share of 4.
type localShare4 struct{ scriptedStore }

func (*localShare4) LocalShare() int                               { return 4 }
func (b *localShare4) Bind(backend.Binding) (backend.Store, error) { return &b.scriptedStore, nil }

// The in-process decision of a store that answered Local, at a share of 4: what the
// live share costs (one read of the backend's share per decision).
func BenchmarkTryAcquireLocalShare(b *testing.B) {
	st := &localShare4{scriptedStore{grant: backend.Grant{Verdict: backend.Local}}}
	l, err := ratelimit.New(ratelimit.Name("bench-local"), ratelimit.Permits(1<<30), ratelimit.Period(time.Hour),
		ratelimit.WithClock(clock.NewManual()), ratelimit.WithBackend(st))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = l.TryAcquire()
	}
}
