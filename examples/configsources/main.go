// Command configsources configures a service from two sources, a properties file and the
// environment, the later winning, and prints the settings its policies resolve: the file
// gives a quota of 10 per second, and a variable such as
// R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS=20 changes it without a new file.
// It then lists the keys that no policy used: a misspelt id is found there.
//
//	R4C_INSTANCES_SearchAPI__Search_RATELIMITER_PERMITS=20 go run ./examples/configsources
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	_ "embed"

	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

//go:embed service.properties
var serviceProperties string

func main() {
	if err := run(context.Background(), os.Stdout, strings.NewReader(serviceProperties)); err != nil {
		fmt.Fprintln(os.Stderr, "configsources:", err)
		os.Exit(1)
	}
}

func search(ctx context.Context, q string) (string, error) { return "results for " + q, nil }

// run builds the registry from the properties in file and the environment, wraps the
// search function, and prints what its policies resolved.
func run(ctx context.Context, w io.Writer, file io.Reader) error {
	// README:begin sources
	fromFile, err := resilience.LoadProperties(file) // or LoadYAML
	if err != nil {
		return err // R4C-CFG-002 with the line, R4C-CFG-003 for a key given twice
	}
	fromEnv, err := resilience.FromEnv() // R4C_… variables
	if err != nil {
		return err
	}
	reg, err := resilience.NewRegistry(
		resilience.WithProperties(fromFile),
		resilience.WithProperties(fromEnv)) // the later source wins for a key given twice
	if err != nil {
		return err // R4C-CFG-001 for an unknown key, naming the closest one
	}
	s, err := resilience.Wrap1(reg, "SearchAPI.Search", search,
		resilience.Retry(),
		resilience.CircuitBreaker(),
		resilience.RateLimiter()) // permits and period come from the configuration
	if err != nil {
		return err
	}
	if unused := reg.UnusedKeys(); len(unused) > 0 { // once every function is wrapped
		return fmt.Errorf("keys that no policy uses (a misspelt id?): %v", unused)
	}
	// README:end sources
	if _, err := s(ctx, "go"); err != nil {
		return err
	}

	lim, err := resilience.Lookup[*ratelimit.Limiter](reg, ratelimit.Layer, "SearchAPI.Search")
	if err != nil {
		return err
	}
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "SearchAPI.Search")
	if err != nil {
		return err
	}
	lc, bc := lim.Config(), cb.Config()
	fmt.Fprintf(w, "SearchAPI.Search: rate limiter %d per %v, maxWait %v; breaker waitInOpen %v\n",
		lc.Permits, lc.Period, lc.MaxWait, bc.WaitInOpen)
	return nil
}
