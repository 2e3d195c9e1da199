package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsrl "github.com/failsafe-go/failsafe-go/ratelimiter"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"golang.org/x/time/rate"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// observedRegistry returns a registry whose observer is resilienceotel's Metrics on an
// OpenTelemetry SDK meter provider (read by a ManualReader, never collected here).
func observedRegistry(b *testing.B) *resilience.Registry {
	b.Helper()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := resilienceotel.New(mp)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := resilience.NewRegistry(resilience.WithObserver(m))
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Observe(reg); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	return reg
}

// oursObserved is oursWrapped on reg.
func oursObserved(b *testing.B, reg *resilience.Registry, permits int, period time.Duration) func(context.Context, int) (int, error) {
	b.Helper()
	call, err := resilience.Wrap1(reg, "Bench.Call", echo,
		resilience.RateLimiter(ratelimit.Permits(permits), ratelimit.Period(period)))
	if err != nil {
		b.Fatal(err)
	}
	return call
}

// otelCounter returns an SDK counter, and the option of the attribute set a user would
// precompute for one outcome of one instance: what a peer's listener adds to per call.
func otelCounter(b *testing.B) (metric.Int64Counter, []metric.AddOption) {
	b.Helper()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	c, err := mp.Meter("bench").Int64Counter("rate_limiter.calls")
	if err != nil {
		b.Fatal(err)
	}
	set := attribute.NewSet(attribute.String("instance", "Bench.Call"), attribute.String("outcome", "admitted"))
	return c, []metric.AddOption{metric.WithAttributeSet(set)}
}

// BenchmarkObserved measures one call through a rate limiter, admitted and rejected, by
// one goroutine, without an observer ("unobserved") and with OpenTelemetry metrics
// ("otel"): ours with resilienceotel's Metrics as the registry's observer; failsafe-go's
// executor with its listeners (OnSuccess, OnRateLimitExceeded) adding to an OpenTelemetry
// counter, the nearest it has; golang.org/x/time/rate, which has no hooks, with the caller
// adding to the counter after Allow.
func BenchmarkObserved(b *testing.B) {
	ctx := context.Background()
	loop := func(b *testing.B, call func() error, wantErr bool) {
		var misses int64
		b.ReportAllocs()
		for b.Loop() {
			if err := call(); (err != nil) != wantErr {
				misses++
			}
		}
		reportMisses(b, misses)
	}
	for _, observed := range []bool{false, true} {
		name := "unobserved"
		if observed {
			name = "otel"
		}
		ours := func(b *testing.B, permits int, period time.Duration) func(context.Context, int) (int, error) {
			if observed {
				return oursObserved(b, observedRegistry(b), permits, period)
			}
			return oursWrapped(b, permits, period)
		}
		b.Run("resilience4go/ratelimiter/admitted/"+name, func(b *testing.B) {
			call := ours(b, admitPermits, admitPeriod)
			loop(b, func() error { _, err := call(ctx, 1); return err }, false)
		})
		b.Run("resilience4go/ratelimiter/rejected/"+name, func(b *testing.B) {
			call := ours(b, 1, rejectPeriod)
			if _, err := call(ctx, 1); err != nil {
				b.Fatal(err)
			}
			loop(b, func() error { _, err := call(ctx, 1); return err }, true)
		})

		failsafeExec := func(b *testing.B, rl fsrl.RateLimiter[int]) failsafe.Executor[int] {
			exec := failsafe.With[int](rl)
			if observed {
				c, opts := otelCounter(b)
				exec = exec.OnSuccess(func(failsafe.ExecutionDoneEvent[int]) { c.Add(ctx, 1, opts...) })
			}
			return exec
		}
		b.Run("failsafe/ratelimiter/admitted/"+name, func(b *testing.B) {
			exec := failsafeExec(b, failsafeAdmitting())
			loop(b, func() error { _, err := exec.Get(one); return err }, false)
		})
		b.Run("failsafe/ratelimiter/rejected/"+name, func(b *testing.B) {
			builder := fsrl.NewSmoothBuilder[int](1, rejectPeriod)
			if observed {
				c, opts := otelCounter(b)
				builder = builder.OnRateLimitExceeded(func(failsafe.ExecutionEvent[int]) { c.Add(ctx, 1, opts...) })
			}
			rl := builder.Build()
			if !rl.TryAcquirePermit() {
				b.Fatal("the first permit was refused")
			}
			exec := failsafe.With[int](rl)
			loop(b, func() error { _, err := exec.Get(one); return err }, true)
		})

		xrate := func(b *testing.B, l *rate.Limiter) func() error {
			if !observed {
				return func() error {
					if !l.Allow() {
						return ratelimit.ErrExceeded
					}
					return nil
				}
			}
			c, opts := otelCounter(b)
			return func() error {
				ok := l.Allow()
				c.Add(ctx, 1, opts...) // the caller counts each decision itself
				if !ok {
					return ratelimit.ErrExceeded
				}
				return nil
			}
		}
		b.Run("x-time-rate/Allow/admitted/"+name, func(b *testing.B) {
			loop(b, xrate(b, rateAdmitting()), false)
		})
		b.Run("x-time-rate/Allow/rejected/"+name, func(b *testing.B) {
			loop(b, xrate(b, rateRejecting(b)), true)
		})
	}
}
