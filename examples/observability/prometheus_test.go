package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// grafanaVars returns the values the real-Prometheus test gives the dashboard's
// variables: $__rate_interval as Grafana computes it for a 1s scrape interval (at least
// four scrape intervals), plus a second so that a window always holds two samples;
// $instance as the variable's "All" (its allValue, .+: the series with a policy
// instance's name).
func grafanaVars(t *testing.T, d dashboard) *strings.Replacer {
	t.Helper()
	all := instanceVariable(t, d).AllValue
	require.NotEmpty(t, all, "the variable instance has no allValue")
	return strings.NewReplacer(
		"$__rate_interval", "5s",
		"${__rate_interval}", "5s",
		"$instance", all,
		"${instance}", all,
	)
}

// policyLabels are queries that have data when the series carry the policy instance as
// the label name, and none named as Prometheus renames a series' own label that has the
// name of a target label (exported_instance, exported_job): a default scrape leaves name
// as it is.
var policyLabels = map[string]bool{
	`resilience_calls_total{name="inventory"}`:             true,
	`resilience_circuit_breaker_state{name="inventory"}`:   true,
	`resilience_adaptive_limit_limit{name="prices"}`:       true,
	`{__name__=~"resilience_.+", exported_instance!=""}`:   false,
	`{__name__=~"resilience_.+", exported_job!=""}`:        false,
	`{__name__=~"resilience_.+", exported_name!=""}`:       false,
	`{__name__=~"resilience_.+", name=""}`:                 false,
	`resilience_calls_total{instance!~"127.0.0.1:[0-9]+"}`: false,
}

// Every query of the dashboard returns data from a real Prometheus that scrapes
// `-serve` every second with a default scrape configuration (no honor_labels): the
// example, served in-process on a free loopback port, and prometheus, started on another
// with a throwaway storage directory. Skipped when no prometheus binary is on PATH,
// except under CI=true, where that fails.
func TestDashboardQueriesReturnDataFromPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prometheus not installed (CI=true needs it): %v", err)
		}
		t.Skip("prometheus not installed: ", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	target := serveInProcess(t)
	promURL := startPrometheus(t, ctx, bin, target)

	// The queries, with Grafana's variables given values; none may be left.
	var queries []string
	d := loadDashboard(t)
	vars := grafanaVars(t, d)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			q := vars.Replace(tg.Expr)
			require.NotContains(t, q, "$", "panel %q: a variable the test gives no value: %s", p.Title, tg.Expr)
			queries = append(queries, q)
		}
	}
	require.NotEmpty(t, queries)

	// Until every query has data: the rates need two scrapes, and the rejections a few
	// seconds of load above the rate limiter's 10 calls per second.
	empty := queries
	for {
		var still []string
		for _, q := range empty {
			ok, err := hasData(ctx, promURL, q)
			require.NoError(t, err, "query %s", q)
			if !ok {
				still = append(still, q)
			}
		}
		empty = still
		if len(empty) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of the dashboard's %d queries returned no data from prometheus in time:\n  %s",
				len(empty), len(queries), strings.Join(empty, "\n  "))
		case <-time.After(500 * time.Millisecond): // the next round of queries
		}
	}

	// Every query had data: the policies' series are all scraped by now.
	for q, want := range policyLabels {
		got, err := hasData(ctx, promURL, q)
		require.NoError(t, err, "query %s", q)
		require.Equal(t, want, got, "query %s", q)
	}
}

// serveInProcess runs the example with -serve on a free loopback port until the test
// ends, and returns the host:port of its /metrics.
func serveInProcess(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, pw, config{serve: true, addr: "127.0.0.1:0"})
		_ = pw.CloseWithError(err)
		done <- err
	}()
	lines := bufio.NewReader(pr)
	first, err := lines.ReadString('\n')
	drained := make(chan struct{})
	go func() { // the rest of the output, until serve returns
		defer close(drained)
		_, _ = io.Copy(io.Discard, lines)
	}()
	t.Cleanup(func() {
		cancel()
		<-drained
		require.NoError(t, <-done)
	})
	require.NoError(t, err)
	m := regexp.MustCompile(`^serving http://(127\.0\.0\.1:\d+)/metrics: `).FindStringSubmatch(first)
	require.NotNil(t, m, "first line: %q", first)
	return m[1]
}

// startPrometheus starts bin, scraping target's /metrics every second, on a free
// loopback port with its storage in a temporary directory; it returns prometheus' URL
// once a scrape of target has succeeded, and stops prometheus when the test ends.
func startPrometheus(t *testing.T, ctx context.Context, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: observability
    static_configs:
      - targets: [%q]
`, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	addr := freeLoopbackAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	promURL := "http://" + addr
	for {
		up, err := hasData(ctx, promURL, `up{job="observability"} == 1`)
		if err == nil && up {
			return promURL
		}
		select {
		case <-exited:
			t.Fatalf("prometheus exited: %v\n%s", cmd.ProcessState, logs.String())
		case <-ctx.Done():
			t.Fatalf("prometheus did not scrape %s in time (last: %v)\n%s", target, err, logs.String())
		case <-time.After(200 * time.Millisecond): // poll again
		}
	}
}

// freeLoopbackAddr returns a loopback host:port that was free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// hasData evaluates query at promURL's /api/v1/query, now, and reports whether it
// returned at least one sample whose value is a number (not NaN).
func hasData(ctx context.Context, promURL, query string) (bool, error) {
	u := promURL + "/api/v1/query?" + url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Close = true // no idle connection left behind
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     []vectorElement `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return false, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if body.Status != "success" {
		return false, fmt.Errorf("%s: %s", resp.Status, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return false, fmt.Errorf("result type %s, not a vector", body.Data.ResultType)
	}
	return slices.ContainsFunc(body.Data.Result, func(e vectorElement) bool {
		v, _ := e.Value[1].(string)
		return v != "" && v != "NaN"
	}), nil
}

// vectorElement is one sample of an instant vector, as the HTTP API gives it: its
// value is [unix time, "value"].
type vectorElement struct {
	Value [2]any `json:"value"`
}
