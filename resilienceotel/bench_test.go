package resilienceotel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// observation is how a benchmark's registry is observed.
type observation int

const (
	unobserved  observation = iota // no observer
	nopObserved                    // an observer whose recorders do nothing: the policies' and the registry's own cost of being observed
	observed                       // a Metrics
)

// variants are the observations each benchmark runs with, by name.
var variants = []struct {
	name string
	o    observation
}{{"unobserved", unobserved}, {"nop", nopObserved}, {"observed", observed}}

// nopObserver makes recorders that do nothing.
type nopObserver struct{}

func (nopObserver) Instrument(policy.Layer, string) observe.Recorder { return nopRecorder{} }

type nopRecorder struct{}

func (nopRecorder) Record(context.Context, observe.Outcome) {}
func (nopRecorder) Event(context.Context, policy.Event)     {}

// benchRegistry returns a registry on the system clock, observed as o says: by a Metrics
// on an SDK MeterProvider with a ManualReader, by recorders that do nothing, or not.
func benchRegistry(b *testing.B, o observation) *resilience.Registry {
	b.Helper()
	var opts []resilience.RegistryOption
	switch o {
	case nopObserved:
		opts = append(opts, resilience.WithObserver(nopObserver{}))
	case observed:
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		m, err := resilienceotel.New(mp)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = m.Close() })
		opts = append(opts, resilience.WithObserver(m))
	}
	reg, err := resilience.NewRegistry(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

func benchCall(b *testing.B, o observation, permits int, specs ...resilience.Spec) {
	reg := benchRegistry(b, o)
	call, err := resilience.Wrap(reg, "API.Get", func(context.Context) (int, error) { return 1, nil },
		append([]resilience.Spec{resilience.RateLimiter(ratelimit.Permits(permits), ratelimit.Period(time.Hour))}, specs...)...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	_, _ = call(ctx) // a limiter of 1 permit rejects from here on
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_, _ = call(ctx)
	}
}

// A call admitted by a rate limiter.
func BenchmarkAdmitted(b *testing.B) {
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) { benchCall(b, v.o, 1<<30) })
	}
}

// A call rejected by a rate limiter.
func BenchmarkRejected(b *testing.B) {
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) { benchCall(b, v.o, 1) })
	}
}

// A successful call through a circuit breaker, whose duration goes to a histogram.
func BenchmarkBreakerSuccess(b *testing.B) {
	run := func(b *testing.B, o observation) {
		reg := benchRegistry(b, o)
		call, err := resilience.Wrap(reg, "API.Get", func(context.Context) (int, error) { return 1, nil },
			resilience.CircuitBreaker())
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = call(ctx)
		}
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) { run(b, v.o) })
	}
}

// Admitted calls on every core, to show the contention of the counters.
func BenchmarkAdmittedParallel(b *testing.B) {
	run := func(b *testing.B, o observation) {
		reg := benchRegistry(b, o)
		call, err := resilience.Wrap(reg, "API.Get", func(context.Context) (int, error) { return 1, nil },
			resilience.RateLimiter(ratelimit.Permits(1<<30), ratelimit.Period(time.Hour)))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				_, _ = call(ctx)
			}
		})
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) { run(b, v.o) })
	}
}

// The recorders alone: what this package adds to an observed call.
func BenchmarkRecorder(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := resilienceotel.New(mp)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	rl := m.Instrument(ratelimit.Layer, "rl")
	call := m.Instrument(observe.LayerCall, "call")
	cb := m.Instrument(circuitbreaker.Layer, "cb")
	rejection := policy.Event{Kind: ratelimit.EventRejected, Instance: "rl", RetryAfter: time.Second}
	b.Run("admitted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rl.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})
			call.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded})
		}
	})
	b.Run("rejected", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rl.Record(ctx, observe.Outcome{Result: observe.ResultRejected})
			rl.Event(ctx, rejection)
			call.Record(ctx, observe.Outcome{Result: observe.ResultRejected, RejectedBy: ratelimit.Layer})
		}
	})
	b.Run("breaker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cb.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded, Latency: time.Millisecond})
		}
	})
	b.Run("admittedParallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				rl.Record(ctx, observe.Outcome{Result: observe.ResultAdmitted})
				call.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded})
			}
		})
	})
}
