package resilienceotel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
)

// A rate limiter of 10 calls per second meets a burst of 25: the metrics count 10
// admitted and 15 rejected calls, and no permit is left.
func Example() {
	// README:begin otel
	reader := sdkmetric.NewManualReader() // in production, a periodic reader and an exporter
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	m, err := resilienceotel.New(mp) // before the registry: the registry asks it for recorders
	if err != nil {
		panic(err)
	}
	defer func() { _ = m.Close() }()
	reg, _ := resilience.NewRegistry(resilience.WithClock(clock.NewManual()), resilience.WithObserver(m))
	_ = m.Observe(reg) // the instruments read from the registry's snapshots

	search, _ := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	// README:end otel
	for range 25 {
		_, _ = search(context.Background(), "otel")
	}

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	var lines []string
	for _, mt := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := mt.Data.(metricdata.Sum[int64]); ok && strings.HasPrefix(mt.Name, "resilience.rate_limiter.") {
			for _, p := range sum.DataPoints {
				lines = append(lines, fmt.Sprintf("%s{%s} %d", mt.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value))
			}
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// resilience.rate_limiter.available_permits{name=SearchAPI.Search} 0
	// resilience.rate_limiter.calls{name=SearchAPI.Search,outcome=admitted} 10
	// resilience.rate_limiter.calls{name=SearchAPI.Search,outcome=rejected} 15
	// resilience.rate_limiter.shadow_rejections{name=SearchAPI.Search} 0
	// resilience.rate_limiter.waited_calls{name=SearchAPI.Search} 0
	// resilience.rate_limiter.waiting_calls{name=SearchAPI.Search} 0
}
