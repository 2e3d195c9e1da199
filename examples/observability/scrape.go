package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4go/resilience4go/resilienceotel"
)

// scrape GETs url, a /metrics endpoint, and parses its text format: the families by
// name, as Prometheus names them (counters with _total, histograms without their
// _bucket, _sum and _count suffixes).
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// instrumentNames collects the metrics through reader and returns the names of
// resilienceotel's instruments that have data, sorted.
func instrumentNames(ctx context.Context, reader *sdkmetric.ManualReader) ([]string, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return nil, err
	}
	var names []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != resilienceotel.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// find returns the series of family name whose labels include the pairs (name, value,
// name, value…); nil if there is none.
func find(fams map[string]*dto.MetricFamily, name string, pairs ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(pairs); i += 2 {
			if label(m, pairs[i]) != pairs[i+1] {
				continue next
			}
		}
		return m
	}
	return nil
}

// label returns the value of m's label name; "" if it has none.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value returns the value of a counter's or gauge's series (see find); 0 if there is
// none.
func value(fams map[string]*dto.MetricFamily, name string, pairs ...string) float64 {
	m := find(fams, name, pairs...)
	switch {
	case m == nil:
		return 0
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// summarize prints the key series of the scrape of url.
func summarize(w io.Writer, url string, fams map[string]*dto.MetricFamily) {
	v := func(name string, pairs ...string) int {
		return int(value(fams, name, append([]string{"name", "inventory"}, pairs...)...))
	}
	fmt.Fprintf(w, "GET %s, name=\"inventory\":\n", url)

	const calls = "resilience_calls_total"
	rejected := []string{"rateLimiter", "circuitBreaker", "bulkhead"}
	total := 0
	for _, l := range rejected {
		total += v(calls, "outcome", "rejected", "layer", l)
	}
	fmt.Fprintf(w, "  %-22s succeeded %d, failed %d, rejected %d: rateLimiter %d, circuitBreaker %d, bulkhead %d\n",
		"whole calls", v(calls, "outcome", "succeeded"), v(calls, "outcome", "failed"), total,
		v(calls, "outcome", "rejected", "layer", rejected[0]),
		v(calls, "outcome", "rejected", "layer", rejected[1]),
		v(calls, "outcome", "rejected", "layer", rejected[2]))

	fmt.Fprintf(w, "  %-22s admitted %d, rejected %d; %d permits available\n", "rate limiter",
		v("resilience_rate_limiter_calls_total", "outcome", "admitted"),
		v("resilience_rate_limiter_calls_total", "outcome", "rejected"),
		v("resilience_rate_limiter_available_permits"))

	const cb = "resilience_circuit_breaker_calls_total"
	state := "?"
	for _, s := range []string{"closed", "open", "half_open", "disabled", "forced_open"} {
		if v("resilience_circuit_breaker_state", "state", s) == 1 {
			state = s
		}
	}
	var moves []string
	for _, t := range [][2]string{{"closed", "open"}, {"open", "half_open"}, {"half_open", "closed"}, {"half_open", "open"}} {
		if n := v("resilience_circuit_breaker_transitions_total", "from", t[0], "to", t[1]); n > 0 {
			moves = append(moves, fmt.Sprintf("%s→%s %d", t[0], t[1], n))
		}
	}
	fmt.Fprintf(w, "  %-22s %s; succeeded %d, failed %d, ignored %d, not_permitted %d; slow %d\n", "circuit breaker", state,
		v(cb, "outcome", "succeeded"), v(cb, "outcome", "failed"), v(cb, "outcome", "ignored"), v(cb, "outcome", "not_permitted"),
		v("resilience_circuit_breaker_slow_calls_total", "outcome", "succeeded")+v("resilience_circuit_breaker_slow_calls_total", "outcome", "failed"))
	fmt.Fprintf(w, "  %-22s %s\n", "breaker transitions", strings.Join(moves, ", "))
	var durations []string
	for _, o := range []string{"succeeded", "failed"} {
		if m := find(fams, "resilience_circuit_breaker_call_duration_seconds", "name", "inventory", "outcome", o); m != nil {
			h := m.GetHistogram()
			durations = append(durations, fmt.Sprintf("%s %d calls in %.3fs", o, h.GetSampleCount(), h.GetSampleSum()))
		}
	}
	fmt.Fprintf(w, "  %-22s %s\n", "breaker call duration", strings.Join(durations, ", "))

	fmt.Fprintf(w, "  %-22s admitted %d, rejected %d; %d of %d slots free, %d queued\n", "bulkhead",
		v("resilience_bulkhead_calls_total", "outcome", "admitted"), v("resilience_bulkhead_calls_total", "outcome", "rejected"),
		v("resilience_bulkhead_available_slots"), v("resilience_bulkhead_max_slots"), v("resilience_bulkhead_queued_calls"))

	const rt = "resilience_retry_calls_total"
	var kinds []string
	for _, k := range []string{"succeeded_without_retry", "succeeded_with_retry", "failed_without_retry", "failed_with_retry", "aborted"} {
		if n := v(rt, "kind", k); n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(w, "  %-22s %s; %d attempts\n", "retry", strings.Join(kinds, ", "), v("resilience_retry_attempts_total"))
}
