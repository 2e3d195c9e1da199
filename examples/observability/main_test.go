package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"

	"github.com/resilience4go/resilience4go/resilienceotel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// playScript runs the example as `go run ./examples/observability` does, on a loopback
// port, and returns its report and output.
func playScript(t *testing.T, cfg config) (*report, string) {
	t.Helper()
	var out bytes.Buffer
	cfg.addr = scriptAddr
	rep, err := run(context.Background(), &out, cfg)
	require.NoError(t, err)
	require.NotNil(t, rep)
	return rep, out.String()
}

// scraped returns the value of the series of family name whose labels include
// name="inventory" (the policy instance) and the pairs; it fails the test if there is none. Every series
// carries the exporter's otel_scope_name label, the meter's scope.
func scraped(t *testing.T, fams map[string]*dto.MetricFamily, name string, pairs ...string) float64 {
	t.Helper()
	m := find(fams, name, append([]string{"name", "inventory"}, pairs...)...)
	require.NotNil(t, m, "no series %s%v in the scrape", name, pairs)
	assert.Equal(t, resilienceotel.ScopeName, label(m, "otel_scope_name"), "%s%v", name, pairs)
	return value(fams, name, append([]string{"name", "inventory"}, pairs...)...)
}

// OB-6: the scripted load, scraped from /metrics over real HTTP and parsed with expfmt,
// gives exactly the figures the script implies. The exporter names the instruments
// Prometheus' way: dots become underscores, counters end in _total, the unit s becomes
// _seconds and % _percent, and {call}-like units are dropped.
//
// The script (see script), step by step, with what each layer decides:
//
//	0s  burst      25 calls, 4ms each: the rate limiter admits its burst of 10 (they end
//	               by 40ms, before the next permit at 100ms) and rejects 15.
//	1s  steady     4 calls (30ms) and a 503 (20ms) retried once: 5 attempts.
//	2s  outage     call A fails 3 times, call B once (150ms each): the window of the last
//	               10 calls holds 5 failures (the 503 of 1s and these 4): 50%, the breaker
//	               opens. B's retry and the 6 calls after it are not permitted.
//	3s-5s open     5 calls each step, not permitted (open for 3s from 2.8s).
//	6s  half-open  1 trial call (300ms: slow), succeeds; one trial left.
//	7s  recovered  the second trial (40ms) closes the breaker; 4 more calls (40ms).
//	8s  bulkhead   2 calls held in flight take both slots; a third is rejected; the two
//	               end 60ms and 120ms after they started.
//	9s, 10s        5 calls (20ms) each.
//	11s prices     3 quotes from the price service: one of 20ms; one whose first attempt
//	               (200ms) is hedged at 50ms by a second that answers in 20ms and wins;
//	               one whose two attempts (400ms) both run past the 250ms timeout.
func TestOB6_ScrapeHasExactCounters(t *testing.T) {
	rep, _ := playScript(t, config{})
	fams := rep.Metrics
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/metrics$`, rep.URL)

	// Whole calls: 25 + 4 + 8 + 3×5 + 1 + 5 + 3 + 2×5 = 71 calls.
	//   rejected by the rate limiter: the 15 of the burst;
	//   by the breaker: B and 6 calls at 2s, 3×5 at 3s-5s = 22;
	//   by the bulkhead: 1 at 8s;
	//   failed: A, whose 3 attempts failed;
	//   succeeded: 10 + 4 + 1 + 5 + 2 + 10 = 32 (= 71 - 15 - 22 - 1 - 1).
	const calls = "resilience_calls_total"
	assert.Equal(t, 15.0, scraped(t, fams, calls, "outcome", "rejected", "layer", "rateLimiter"))
	assert.Equal(t, 22.0, scraped(t, fams, calls, "outcome", "rejected", "layer", "circuitBreaker"))
	assert.Equal(t, 1.0, scraped(t, fams, calls, "outcome", "rejected", "layer", "bulkhead"))
	assert.Equal(t, 1.0, scraped(t, fams, calls, "outcome", "failed"))
	assert.Equal(t, 32.0, scraped(t, fams, calls, "outcome", "succeeded"))

	// Rate limiter, once per attempt that the breaker let through: 25 at 0s, 5 at 1s, 4 at
	// 2s (A's 3 and B's first), 1 at 6s, 5 at 7s, 3 at 8s, 10 at 9s-10s = 53 decisions;
	// rejected: the 15 of the burst; admitted: 10 + 5 + 4 + 1 + 5 + 3 + 10 = 38.
	assert.Equal(t, 10.0+5+4+1+5+3+10, scraped(t, fams, "resilience_rate_limiter_calls_total", "outcome", "admitted"))
	assert.Equal(t, 15.0, scraped(t, fams, "resilience_rate_limiter_calls_total", "outcome", "rejected"))
	assert.Equal(t, 0.0, scraped(t, fams, "resilience_rate_limiter_waited_calls_total"))
	// After the 10s step the clock is at 10.1s (its 5 calls took 20ms each), and the last
	// of them set the limiter's next theoretical arrival to 10.5s: a permit every 100ms,
	// burst 10: floor((10.1s + 1s - 10.5s) / 100ms) = 6 permits. At the scrape, after the
	// quotes of 11s, the limiter has its whole burst again.
	require.Len(t, rep.Samples, len(script))
	assert.Equal(t, int64(6), rep.Samples[10].permits)
	assert.Equal(t, 10.0, scraped(t, fams, "resilience_rate_limiter_available_permits"))

	// Circuit breaker, once per attempt:
	//   succeeded: 10 + 4 + 1 + 5 + 2 + 10 = 32 (at 1s, the 4 calls' successful attempts);
	//   failed: the 503 at 1s, A's 3 and B's first at 2s = 5;
	//   ignored: our own limits' rejections, which IgnoreOn lists: 15 + 1 = 16;
	//   not_permitted: 1 + 6 at 2s, 15 at 3s-5s = 22.
	const cb = "resilience_circuit_breaker_calls_total"
	assert.Equal(t, 32.0, scraped(t, fams, cb, "outcome", "succeeded"))
	assert.Equal(t, 5.0, scraped(t, fams, cb, "outcome", "failed"))
	assert.Equal(t, 16.0, scraped(t, fams, cb, "outcome", "ignored"))
	assert.Equal(t, 22.0, scraped(t, fams, cb, "outcome", "not_permitted"))
	// Slow (over 250ms): only the 300ms trial.
	assert.Equal(t, 1.0, scraped(t, fams, "resilience_circuit_breaker_slow_calls_total", "outcome", "succeeded"))
	assert.Equal(t, 0.0, scraped(t, fams, "resilience_circuit_breaker_slow_calls_total", "outcome", "failed"))
	// State: one series per state, 1 for the current one; closed again since 7s.
	for state, want := range map[string]float64{"closed": 1, "open": 0, "half_open": 0, "disabled": 0, "forced_open": 0} {
		assert.Equal(t, want, scraped(t, fams, "resilience_circuit_breaker_state", "state", state), state)
	}
	for _, move := range [][2]string{{"closed", "open"}, {"open", "half_open"}, {"half_open", "closed"}} {
		assert.Equal(t, 1.0, scraped(t, fams, "resilience_circuit_breaker_transitions_total", "from", move[0], "to", move[1]), "%v", move)
	}
	assert.Len(t, fams["resilience_circuit_breaker_transitions_total"].GetMetric(), 3)
	// Rates over the calls since it closed (more than its minimum of 10): none failed, none
	// slow.
	assert.Equal(t, 0.0, scraped(t, fams, "resilience_circuit_breaker_failure_rate_percent"))
	assert.Equal(t, 0.0, scraped(t, fams, "resilience_circuit_breaker_slow_call_rate_percent"))

	// Call duration through the breaker, in seconds, by outcome. Succeeded: 10 × 4ms,
	// 4 × 30ms, 300ms, 5 × 40ms, 60ms and 120ms (the two held calls), 10 × 20ms.
	h := histogram(t, fams, "succeeded")
	assert.Equal(t, uint64(32), h.GetSampleCount())
	assert.InDelta(t, 10*0.004+4*0.030+0.300+5*0.040+0.060+0.120+10*0.020, h.GetSampleSum(), 1e-9) // 1.04s
	assert.Equal(t, map[float64]uint64{
		0.005: 10,                  // the burst's 4ms
		0.01:  10,                  //
		0.025: 10 + 10,             // + 20ms at 9s-10s
		0.05:  10 + 10 + 4 + 5,     // + 30ms at 1s, 40ms at 7s
		0.075: 10 + 10 + 4 + 5 + 1, // + 60ms
		0.1:   30,                  //
		0.25:  31,                  // + 120ms
		0.5:   32,                  // + the 300ms trial
		0.75:  32, 1: 32, 2.5: 32, 5: 32, 7.5: 32, 10: 32, math.Inf(1): 32,
	}, buckets(h))
	// Failed: the 503 of 20ms, 4 × 150ms.
	h = histogram(t, fams, "failed")
	assert.Equal(t, uint64(5), h.GetSampleCount())
	assert.InDelta(t, 0.020+4*0.150, h.GetSampleSum(), 1e-9) // 0.62s
	assert.Equal(t, uint64(1), buckets(h)[0.025])
	assert.Equal(t, uint64(5), buckets(h)[0.25])
	// Ignored: the 16 rejections of the limits inside, which took no time.
	h = histogram(t, fams, "ignored")
	assert.Equal(t, uint64(16), h.GetSampleCount())
	assert.Zero(t, h.GetSampleSum())

	// Bulkhead: every attempt the rate limiter admitted, 38; the third call at 8s found
	// both slots taken. At the end, every slot is free again.
	assert.Equal(t, 37.0, scraped(t, fams, "resilience_bulkhead_calls_total", "outcome", "admitted"))
	assert.Equal(t, 1.0, scraped(t, fams, "resilience_bulkhead_calls_total", "outcome", "rejected"))
	assert.Equal(t, 2.0, scraped(t, fams, "resilience_bulkhead_available_slots"))
	assert.Equal(t, 2.0, scraped(t, fams, "resilience_bulkhead_max_slots"))
	assert.Equal(t, 0.0, scraped(t, fams, "resilience_bulkhead_queued_calls"))

	// Retry, once per call (71):
	//   succeeded_without_retry: 10 + 3 + 1 + 5 + 2 + 10 = 31;
	//   succeeded_with_retry: the 503 at 1s, then a success;
	//   failed_with_retry: A, 3 attempts, every one a 503;
	//   aborted: a rejection is not retried (RetryOn lists only the 503): the burst's 15,
	//   B (its second attempt not permitted) and 6 at 2s, 15 at 3s-5s, 1 at 8s = 38.
	// Attempts: one per call, + 1 (the 503 at 1s) + 2 (A) + 1 (B) = 75.
	const rt = "resilience_retry_calls_total"
	assert.Equal(t, 31.0, scraped(t, fams, rt, "kind", "succeeded_without_retry"))
	assert.Equal(t, 1.0, scraped(t, fams, rt, "kind", "succeeded_with_retry"))
	assert.Equal(t, 1.0, scraped(t, fams, rt, "kind", "failed_with_retry"))
	assert.Equal(t, 0.0, scraped(t, fams, rt, "kind", "failed_without_retry"))
	assert.Equal(t, 38.0, scraped(t, fams, rt, "kind", "aborted"))
	assert.Equal(t, 75.0, scraped(t, fams, "resilience_retry_attempts_total"))

	// The price service's quotes (instance "prices"), at 11s.
	q := func(name string, pairs ...string) float64 {
		t.Helper()
		m := find(fams, name, append([]string{"name", "prices"}, pairs...)...)
		require.NotNil(t, m, "no series %s%v of prices in the scrape", name, pairs)
		return value(fams, name, append([]string{"name", "prices"}, pairs...)...)
	}
	assert.Equal(t, 2.0, q(calls, "outcome", "succeeded"))
	assert.Equal(t, 1.0, q(calls, "outcome", "failed"))
	// Hedge, once per call: the 20ms quote and the hedged one succeeded, the third
	// failed with its last attempt's timeout. Attempts: 1 + 2 + 2 = 5. The budget allows
	// max(10% of 3 calls, 1 per second × 10s) = 10 hedges in its window; 2 were started.
	assert.Equal(t, 2.0, q("resilience_hedge_calls_total", "outcome", "succeeded"))
	assert.Equal(t, 1.0, q("resilience_hedge_calls_total", "outcome", "failed"))
	assert.Equal(t, 5.0, q("resilience_hedge_attempts_total"))
	assert.Equal(t, 8.0, q("resilience_hedge_budget_available"))
	// Timeout, once per attempt: the two 20ms answers in time; the two 400ms attempts
	// past it; the hedged quote's slow first attempt, canceled by the hedge when the
	// second won, failed (with async.ErrCanceled).
	assert.Equal(t, 2.0, q("resilience_timeout_calls_total", "outcome", "succeeded"))
	assert.Equal(t, 2.0, q("resilience_timeout_calls_total", "outcome", "timed_out"))
	assert.Equal(t, 1.0, q("resilience_timeout_calls_total", "outcome", "failed"))
	// Adaptive limit, once per attempt: all 5 let in, none left in flight or waiting; the
	// limit, which started at 4, stays within its bounds, 1 to 20.
	assert.Equal(t, 5.0, q("resilience_adaptive_limit_calls_total", "outcome", "admitted"))
	assert.Equal(t, 0.0, q("resilience_adaptive_limit_calls_total", "outcome", "rejected"))
	assert.Equal(t, 0.0, q("resilience_adaptive_limit_in_flight"))
	assert.Equal(t, 0.0, q("resilience_adaptive_limit_queued_calls"))
	assert.GreaterOrEqual(t, q("resilience_adaptive_limit_limit"), 1.0)
	assert.LessOrEqual(t, q("resilience_adaptive_limit_limit"), 20.0)

	// The exporter's own series: the resource, with the service's name.
	require.NotNil(t, find(fams, "target_info", "service_name", "inventory-client"))
}

// histogram returns the breaker's call-duration histogram of outcome.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, outcome string) *dto.Histogram {
	t.Helper()
	m := find(fams, "resilience_circuit_breaker_call_duration_seconds", "name", "inventory", "outcome", outcome)
	require.NotNil(t, m, "no call duration of outcome %s", outcome)
	require.Equal(t, dto.MetricType_HISTOGRAM, fams["resilience_circuit_breaker_call_duration_seconds"].GetType())
	return m.GetHistogram()
}

// buckets returns h's cumulative counts by upper bound, +Inf included.
func buckets(h *dto.Histogram) map[float64]uint64 {
	out := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		out[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return out
}

// The output is the same on every run, but for the port: the script runs on a manual
// clock.
func TestOB6_OutputIsTheSameOnEveryRun(t *testing.T) {
	_, out := playScript(t, config{})
	out = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).ReplaceAllString(out, "http://127.0.0.1:PORT/")
	assert.Equal(t, wantOutput, out)
}

const wantOutput = `serving http://127.0.0.1:PORT/metrics
the script, on a manual clock:
  0s    burst      25 calls at once (4ms each)                 10 succeeded, 15 rejected by rateLimiter
  1s    steady     4 calls (30ms), one retried after a 503     4 succeeded
  2s    outage     8 calls; every request fails after 150ms    1 failed, 7 rejected by circuitBreaker
  3s    open       5 calls                                     5 rejected by circuitBreaker
  4s    open       5 calls                                     5 rejected by circuitBreaker
  5s    open       5 calls                                     5 rejected by circuitBreaker
  6s    half-open  1 trial call, slow (300ms)                  1 succeeded
  7s    recovered  5 calls (40ms)                              5 succeeded
  8s    bulkhead   2 calls in flight (60ms), a third call      2 succeeded, 1 rejected by bulkhead
  9s    steady     5 calls (20ms)                              5 succeeded
  10s   steady     5 calls (20ms)                              5 succeeded
  11s   prices     3 quotes: 20ms, hedged, past the timeout    2 succeeded, 1 failed
GET http://127.0.0.1:PORT/metrics, name="inventory":
  whole calls            succeeded 32, failed 1, rejected 38: rateLimiter 15, circuitBreaker 22, bulkhead 1
  rate limiter           admitted 38, rejected 15; 10 permits available
  circuit breaker        closed; succeeded 32, failed 5, ignored 16, not_permitted 22; slow 1
  breaker transitions    closed→open 1, open→half_open 1, half_open→closed 1
  breaker call duration  succeeded 32 calls in 1.040s, failed 5 calls in 0.620s
  bulkhead               admitted 37, rejected 1; 2 of 2 slots free, 0 queued
  retry                  succeeded_without_retry 31, succeeded_with_retry 1, failed_with_retry 1, aborted 38; 75 attempts
`

// With -serve, the example serves /metrics on the real clock under its background load
// until its context ends; then every call, the server and the metrics stop (goleak checks
// that nothing is left running).
func TestServeServesMetricsUntilCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, pw, config{serve: true, addr: "127.0.0.1:0", log: &logs})
		_ = pw.CloseWithError(err)
		done <- err
	}()
	lines := bufio.NewReader(pr)
	first, err := lines.ReadString('\n')
	require.NoError(t, err)
	url := regexp.MustCompile(`^serving (http://127\.0\.0\.1:\d+/metrics): `).FindStringSubmatch(first)
	require.NotNil(t, url, "first line: %q", first)

	fams, err := scrape(ctx, url[1])
	require.NoError(t, err)
	// The instruments read from the registry's snapshots are there from the start.
	assert.Equal(t, 2.0, scraped(t, fams, "resilience_bulkhead_max_slots"))
	assert.Equal(t, 1.0, scraped(t, fams, "resilience_circuit_breaker_state", "state", "closed"),
		"the breaker needs 10 calls before it can open")
	require.NotNil(t, find(fams, "resilience_rate_limiter_available_permits", "name", "inventory"))

	cancel()
	rest, err := io.ReadAll(lines)
	require.NoError(t, err)
	require.NoError(t, <-done)
	assert.Equal(t, "stopped\n", string(rest))
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if line != "" {
			assert.Regexp(t, `level=(WARN|ERROR) `, line, "only Warn and above are logged")
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// prometheus.yml scrapes the address that -serve listens on by default, with a default
// scrape configuration (no honor_labels): the dashboard groups by name, the policy
// instance, which such a scrape keeps as it is.
func TestPrometheusConfigScrapesTheServeAddress(t *testing.T) {
	raw, err := os.ReadFile("prometheus.yml")
	require.NoError(t, err)
	var cfg struct {
		ScrapeConfigs []struct {
			HonorLabels   bool `yaml:"honor_labels"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	require.Len(t, cfg.ScrapeConfigs, 1)
	assert.False(t, cfg.ScrapeConfigs[0].HonorLabels)
	require.Len(t, cfg.ScrapeConfigs[0].StaticConfigs, 1)
	assert.Equal(t, []string{serveAddr}, cfg.ScrapeConfigs[0].StaticConfigs[0].Targets)
}
