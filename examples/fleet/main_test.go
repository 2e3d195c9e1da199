//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/redistest"
)

func TestMain(m *testing.M) {
	if js, ok := os.LookupEnv(envInstance); ok { // the test binary started as an instance
		instanceMain(js)
		return
	}
	goleak.VerifyTestMain(redistest.Main(m))
}

// short is a short run of the command: 3 instances of 2 workers each, on Redis (REDIS_ADDR, or
// a server of the test's own).
func short(t *testing.T, scenario string, seconds float64) string {
	return shortOf(t, scenario, seconds, 3)
}

// shortOf is short with n instances.
func shortOf(t *testing.T, scenario string, seconds float64, n int) string {
	return shortOn(t, scenario, seconds, n, false)
}

// shortOn is shortOf, on the Redis Cluster of the tests when cluster is true.
func shortOn(t *testing.T, scenario string, seconds float64, n int, cluster bool) string {
	if cluster {
		t.Setenv("REDIS_CLUSTER_ADDRS", strings.Join(redistest.ClusterAddrs(t), ","))
	} else {
		t.Setenv("REDIS_ADDR", redistest.Addr(t))
	}
	var out bytes.Buffer
	err := run(context.Background(), &out, options{cluster: cluster, instances: n, seconds: seconds, workers: 2, permits: 200,
		period: time.Second, lease: 300 * time.Millisecond, heartbeat: 500 * time.Millisecond, timeout: time.Second, scenario: scenario})
	t.Log("\n" + out.String())
	require.NoError(t, err)
	return out.String()
}

// numbers returns the integers (or decimals) that re captures, of each line it matches.
func numbers(t *testing.T, out, re string) [][]float64 {
	var all [][]float64
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(out, -1) {
		var row []float64
		for _, s := range m[1:] {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			row = append(row, v)
		}
		all = append(all, row)
	}
	return all
}

// With a round trip per decision and with leases, the fleet admits at most the GCRA bound
// over the run, and with leases Redis serves at most one command per 20 decisions.
func TestLS3_FleetQuota(t *testing.T) { fleetQuota(t, false) }

// The same on the Redis Cluster of the tests.
func TestLS3_FleetQuotaOnACluster(t *testing.T) { fleetQuota(t, true) }

func fleetQuota(t *testing.T, cluster bool) {
	out := shortOn(t, "quota", 2, 3, cluster)
	over := numbers(t, out, `over the bound (\d+);`)
	require.Len(t, over, 2)
	assert.Zero(t, over[0][0], "a round trip per decision: over the bound")
	assert.Zero(t, over[1][0], "leases: over the bound")
	per := numbers(t, out, `\(([0-9.e+-]+) per decision\)`)
	require.Len(t, per, 2)
	assert.LessOrEqual(t, per[1][0], 1.0/20, "leases: Redis commands per decision")
}

// An instance killed with SIGKILL while it holds a lease: the others are never over the
// bound, and the fleet admits the quota again within one lease life.
func TestLS7_FleetKill(t *testing.T) {
	out := short(t, "kill", 4)
	over := numbers(t, out, `over the bound (\d+);`)
	require.Len(t, over, 1)
	assert.Zero(t, over[0][0], "over the bound")
	after := numbers(t, out, `; (\d+) from one lease life after it \(the quota: (\d+)\)`)
	require.Len(t, after, 1)
	assert.GreaterOrEqual(t, after[0][0], 0.8*after[0][1], "admitted per period, one lease life after the kill")
}

// Redis paused for 2s: each instance decides in-process at 1/N of the quota, N the live
// instances it last saw (the heartbeat), so together they admit the quota within 10% plus
// one burst; with 2 of the 4 stopped more than a heartbeat expiry before the outage, the
// 2 others take half each.
func TestRL36_FleetOutage(t *testing.T) {
	out := shortOf(t, "outage", 2, 4)
	runs := numbers(t, out, `admitted (\d+) in the outage's last \S+; the quota is (\d+) `)
	require.Len(t, runs, 2)
	for i, r := range runs {
		assert.InDelta(t, r[1], r[0], 0.1*r[1]+200, "run %d: admitted in the outage against the quota", i)
	}
	each := numbers(t, out, `each instance: (\d+) (\d+)\n`)
	require.Len(t, each, 1, "the second run's 2 instances")
	for _, n := range each[0] {
		assert.InDelta(t, runs[1][1]/2, n, 0.1*runs[1][1]/2+100, "each of the 2 instances takes half the quota")
	}
}

// A breaker the fleet shares: instance 0 opens on its own calls, the others follow it,
// and at most the permitted number of half-open trials run in the whole fleet.
func TestCB6_FleetBreaker(t *testing.T) { fleetBreaker(t, false) }

// The same on the Redis Cluster of the tests.
func TestCB6_FleetBreakerOnACluster(t *testing.T) { fleetBreaker(t, true) }

func fleetBreaker(t *testing.T, cluster bool) {
	out := shortOn(t, "breaker", 10, 3, cluster)
	assert.Contains(t, out, "opened (on its own calls: true)")
	follows := numbers(t, out, `instance \d opened ([0-9.]+)(?:µs|ms|s) after it \(followed the fleet: true;`)
	assert.Len(t, follows, 2, "instances 1 and 2 followed the fleet")
	ran := numbers(t, out, `half-open: (\d+) trials ran in the fleet \(at most (\d+)\)`)
	require.Len(t, ran, 1)
	assert.LessOrEqual(t, ran[0][0], ran[0][1], "half-open trials in the fleet")
	assert.Positive(t, ran[0][0], "a trial closed the breakers")
}
