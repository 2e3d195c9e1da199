package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboard is what the test reads of dashboard.json.
type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			RefID        string `json:"refId"`
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

// variable is what the test reads of a templated variable of the dashboard.
type variable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Definition string `json:"definition"`
	AllValue   string `json:"allValue"`
}

// OB-6: dashboard.json is a valid Grafana dashboard whose every panel has a title and
// queries, and whose queries name only series families that the example's /metrics
// exports (a histogram's _bucket, _sum and _count are its family's), as the scripted
// run's scrape shows them; the panels the dashboard promises are there.
func TestOB6_DashboardNamesOnlyExportedSeries(t *testing.T) {
	d := loadDashboard(t)
	assert.NotEmpty(t, d.UID)
	assert.NotEmpty(t, d.Title)
	assert.GreaterOrEqual(t, d.SchemaVersion, 36)
	var dsVar bool
	for _, v := range d.Templating.List {
		if v.Name == "DS_PROMETHEUS" {
			dsVar = v.Type == "datasource" && v.Query == "prometheus"
		}
	}
	assert.True(t, dsVar, "a templated data source variable DS_PROMETHEUS, of Prometheus")
	// The variable instance lists the values of the label name, the policy instance's
	// id; its "All" matches only series that have one.
	v := instanceVariable(t, d)
	assert.Equal(t, "label_values(resilience_calls_total, name)", v.Definition)
	assert.Equal(t, map[string]any{"query": v.Definition, "refId": "PrometheusVariableQueryEditor-VariableQuery", "qryType": 1.0}, v.Query)
	assert.Equal(t, ".+", v.AllValue)

	rep, _ := playScript(t, config{})
	charted := map[string]bool{}
	ids := map[int]bool{}
	require.NotEmpty(t, d.Panels)
	for _, p := range d.Panels {
		assert.NotEmpty(t, p.Title, "panel %d has no title", p.ID)
		assert.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		assert.Contains(t, []string{"timeseries", "state-timeline"}, p.Type, p.Title)
		assert.Equal(t, "${DS_PROMETHEUS}", p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, "panel %q has no target", p.Title)
		for _, tg := range p.Targets {
			// The policy instance is the label name. Under a default scrape
			// configuration instance is the target's host:port, and exported_instance
			// (Prometheus' name for a series' own label instance) is in no series.
			for _, text := range []string{tg.Expr, tg.LegendFormat} {
				assert.False(t, usesTargetLabel(text), "panel %q: instance is the target's label, not the policy's: %s", p.Title, text)
			}
			assert.Contains(t, tg.Expr, `name=~"$instance"`, "panel %q: the variable instance filters by name", p.Title)
			names := metricNames(tg.Expr)
			require.NotEmpty(t, names, "panel %q: no metric in %q", p.Title, tg.Expr)
			for _, n := range names {
				assert.True(t, exported(rep.Metrics, n), "panel %q names %s, which /metrics does not export", p.Title, n)
				charted[n] = true
			}
		}
	}
	for _, n := range []string{
		"resilience_calls_total",                                  // calls by outcome, rejections by layer
		"resilience_rate_limiter_available_permits",               // available permits
		"resilience_rate_limiter_calls_total",                     // admitted vs rejected
		"resilience_bulkhead_calls_total",                         //
		"resilience_bulkhead_available_slots",                     // bulkhead slots and queue
		"resilience_bulkhead_max_slots",                           //
		"resilience_bulkhead_queued_calls",                        //
		"resilience_circuit_breaker_state",                        // breaker state
		"resilience_circuit_breaker_failure_rate_percent",         // failure and slow-call rates
		"resilience_circuit_breaker_slow_call_rate_percent",       //
		"resilience_circuit_breaker_calls_total",                  // breaker calls
		"resilience_retry_calls_total",                            // retry kinds
		"resilience_circuit_breaker_call_duration_seconds_bucket", // latency
		"resilience_timeout_calls_total",                          // timeout outcomes
		"resilience_hedge_calls_total",                            // hedge calls and attempts
		"resilience_hedge_attempts_total",                         //
		"resilience_hedge_budget_available",                       // hedge budget
		"resilience_adaptive_limit_limit",                         // adaptive limit, in flight, queue
		"resilience_adaptive_limit_in_flight",                     //
		"resilience_adaptive_limit_queued_calls",                  //
		"resilience_adaptive_limit_calls_total",                   // adaptive limit's decisions
	} {
		assert.True(t, charted[n], "no panel charts %s", n)
	}
}

// usesTargetLabel reports whether a query or a legend names Prometheus' target label
// instance, or exported_instance; the Grafana variable $instance (${instance}) is not
// a label.
func usesTargetLabel(text string) bool {
	text = strings.NewReplacer("${instance}", "", "$instance", "").Replace(text)
	return targetLabel.MatchString(text)
}

var targetLabel = regexp.MustCompile(`\b(exported_)?instance\b`)

// The labels the dashboard must not use are found in queries and legends, the
// variable is not.
func TestUsesTargetLabel(t *testing.T) {
	for text, want := range map[string]bool{
		`sum by (instance) (x)`:                true,
		`sum by (exported_instance) (x)`:       true,
		`x{exported_instance=~"$instance"}`:    true,
		`{{instance}} p50`:                     true,
		`{{exported_instance}}`:                true,
		`instance`:                             true,
		`sum by (name) (x{name=~"$instance"})`: false,
		`x{name=~"${instance}"}`:               false,
		`{{name}} {{outcome}}`:                 false,
		`resilience_instances_total`:           false,
		`x{my_instance="a"}`:                   false,
	} {
		assert.Equal(t, want, usesTargetLabel(text), text)
	}
}

// instanceVariable returns the dashboard's variable named instance.
func instanceVariable(t *testing.T, d dashboard) variable {
	t.Helper()
	for _, v := range d.Templating.List {
		if v.Name == "instance" {
			return v
		}
	}
	t.Fatal("dashboard.json has no variable instance")
	panic("unreachable")
}

// loadDashboard reads dashboard.json.
func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile("dashboard.json")
	require.NoError(t, err)
	require.True(t, json.Valid(raw), "dashboard.json is not valid JSON")
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	return d
}

// Every policy whose metrics the example exports has a panel, so that a policy added to
// the example cannot be left off the dashboard: for the prefix of each instrument that
// reported data in the scripted run, resilience.<policy>. (or the whole name, for
// resilience.calls), as the exporter spells it (resilience_hedge_), some panel queries
// a series of that prefix. Every resilience_ family of the run's /metrics has one of
// these prefixes: the list is the one /metrics exports.
func TestDashboardChartsEveryPolicy(t *testing.T) {
	rep, _ := playScript(t, config{})
	prefixes := instrumentPrefixes(rep.Instruments)
	for name := range rep.Metrics {
		if strings.HasPrefix(name, "resilience_") {
			assert.True(t, slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }),
				"/metrics exports %s, under none of the instruments' prefixes %v", name, prefixes)
		}
	}
	// The example runs every policy that has metrics.
	for _, p := range []string{"rate_limiter", "circuit_breaker", "bulkhead", "retry", "timeout", "hedge", "adaptive_limit"} {
		assert.Contains(t, prefixes, "resilience_"+p+"_")
	}

	var queried []string
	for _, p := range loadDashboard(t).Panels {
		for _, tg := range p.Targets {
			queried = append(queried, metricNames(tg.Expr)...)
		}
	}
	for _, p := range prefixes {
		assert.True(t, slices.ContainsFunc(queried, func(n string) bool { return strings.HasPrefix(n, p) }),
			"no panel queries a series of %s*, which /metrics exports", p)
	}
}

// instrumentPrefixes returns, for OpenTelemetry instrument names, the prefixes of their
// series as the Prometheus exporter names them, each once, sorted: resilience_hedge_ for
// resilience.hedge.calls (its first two parts), resilience_calls for resilience.calls.
func instrumentPrefixes(instruments []string) []string {
	var prefixes []string
	for _, name := range instruments {
		parts := strings.SplitN(name, ".", 3)
		p := strings.Join(parts[:min(2, len(parts))], "_")
		if len(parts) > 2 {
			p += "_"
		}
		prefixes = append(prefixes, p)
	}
	slices.Sort(prefixes)
	return slices.Compact(prefixes)
}

func TestInstrumentPrefixes(t *testing.T) {
	assert.Equal(t, []string{"resilience_adaptive_limit_", "resilience_call_", "resilience_calls", "resilience_hedge_"},
		instrumentPrefixes([]string{"resilience.hedge.calls", "resilience.calls", "resilience.adaptive_limit.limit",
			"resilience.hedge.budget_available", "resilience.call.duration"}))
}

// exported reports whether name is a series family of the scrape, or a series of a
// histogram family (name_bucket, name_sum, name_count).
func exported(fams map[string]*dto.MetricFamily, name string) bool {
	if fams[name] != nil {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f := fams[base]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
				return true
			}
		}
	}
	return false
}

// promqlWords are PromQL's keywords and aggregation operators, which are not metric
// names even when no "(" follows them (sum by (le) (…)).
var promqlWords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true, "stddev": true,
	"stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true,
	"limitk": true, "limit_ratio": true, "inf": true, "nan": true,
}

// groupings are the keywords followed by a list of label names in parentheses.
var groupings = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricNames returns the metric names a PromQL expression selects, each once, in
// order: the identifiers outside strings, label matchers ({…}) and ranges ([…]) that are
// not numbers or durations, keywords, aggregations, functions (an identifier followed by
// "("), the label lists of by, without, on, ignoring, group_left and group_right, or
// Grafana variables ($name).
func metricNames(expr string) []string {
	var names []string
	seen := map[string]bool{}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = skipPast(expr, i, '}')
		case c == '[':
			i = skipPast(expr, i, ']')
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			for i < len(expr) && (isIdentChar(expr[i]) || expr[i] == '.') {
				i++ // a number, or a duration such as 5m
			}
		case c == '$':
			for i++; i < len(expr) && isIdentChar(expr[i]); i++ {
			}
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdentChar(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			lower := strings.ToLower(word)
			switch {
			case groupings[lower] && k < len(expr) && expr[k] == '(':
				j = skipPast(expr, k, ')')
			case promqlWords[lower], k < len(expr) && expr[k] == '(':
				// a keyword, an aggregation or a function
			case !seen[word]:
				seen[word] = true
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}

// skipString returns the index just past the string that starts at expr[i].
func skipString(expr string, i int) int {
	quote := expr[i]
	for i++; i < len(expr); i++ {
		switch {
		case expr[i] == '\\' && quote != '`':
			i++
		case expr[i] == quote:
			return i + 1
		}
	}
	return len(expr)
}

// skipPast returns the index just past the first end after expr[i], outside strings.
func skipPast(expr string, i int, end byte) int {
	for i++; i < len(expr); {
		switch expr[i] {
		case end:
			return i + 1
		case '"', '\'', '`':
			i = skipString(expr, i)
		default:
			i++
		}
	}
	return len(expr)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// The tokenizer finds the metric names of the PromQL forms dashboards use, and nothing
// else.
func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`up`: {"up"},
		`histogram_quantile(0.99, sum by (instance, le) (rate(x_seconds_bucket{a="b}", c=~"d|e"}[$__rate_interval])))`: {"x_seconds_bucket"},
		`max by (instance) (s{state="half_open"}) + 2 * max by (instance) (s{state=~"open|forced_open"})`:              {"s"},
		`sum(rate(a_total[5m])) / sum(rate(b_total[5m] offset 1h))`:                                                    {"a_total", "b_total"},
		`up == 1 and on(job) foo`:                                               {"up", "foo"},
		`count_values("value", x)`:                                              {"x"},
		`a unless ignoring (le) b`:                                              {"a", "b"},
		`sum without (instance) (c) > bool 0.5e3`:                               {"c"},
		`topk(3, d) / on (le) group_left (x) g`:                                 {"d", "g"},
		`label_replace(e, "dst", "$1", "src", "(.*)")`:                          {"e"},
		`rate(f{instance=~"$instance"}[1m]) * 100 + Inf - NaN`:                  {"f"},
		`sum by (layer) (rate(resilience_calls_total{outcome="rejected"}[1m]))`: {"resilience_calls_total"},
		`{__name__="h"}`:                                                        nil, // a selector by __name__ alone is not read
	} {
		assert.Equal(t, want, metricNames(expr), expr)
	}
}
