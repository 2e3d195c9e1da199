// Command config configures rate limiters from a YAML file of configuration keys
// (resilience.yaml, embedded in the program) and shows, for each attribute of each
// limiter, which level of the precedence set it: built-in defaults, defaults., options in
// code, configs.<name>., instances.<id>. (lowest first). Then it shows what a typo in a key
// gives: NewRegistry refuses it with R4C-CFG-001, naming the closest valid key.
//
//	go run ./examples/config
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

//go:embed resilience.yaml
var configYAML string

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(1)
	}
}

// The functions to wrap: their id, the shared limiter name and configuration name their
// specs select (if any), and the attributes their specs set in code.
var functions = []struct {
	id, name, config string
	permits          int
	period           time.Duration
}{
	{id: "SearchAPI.Search", permits: 10, period: time.Second},
	{id: "SearchAPI.Suggest", permits: 10, period: time.Second},
	{id: "GeocodingAPI.Geocode", name: "geocoding", config: "geocoding-quota", permits: 50, period: time.Minute},
}

func run(ctx context.Context, w io.Writer) error {
	props, err := resilience.LoadYAML(strings.NewReader(configYAML))
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "resilience.yaml, flattened:")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(w, "  %s = %s\n", k, props[k])
	}
	reg, err := resilience.NewRegistry(resilience.WithProperties(props))
	if err != nil {
		return err
	}

	for _, fn := range functions {
		opts := []ratelimit.Option{ratelimit.Permits(fn.permits), ratelimit.Period(fn.period)}
		code := map[string]string{"permits": strconv.Itoa(fn.permits), "period": fn.period.String()}
		id := fn.id // the limiter's id: its Name, if any, else the wrapped function's id
		if fn.name != "" {
			opts, id = append(opts, ratelimit.Name(fn.name)), fn.name
		}
		if fn.config != "" {
			opts = append(opts, ratelimit.UseConfig(fn.config))
		}
		_, err := resilience.Wrap1(reg, fn.id,
			func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
			resilience.RateLimiter(opts...))
		if err != nil {
			return err
		}
		h, err := reg.RateLimiter(id)
		if err != nil {
			return err
		}
		resolved := attributes(h.(interface{ Config() ratelimit.Config }).Config())

		fmt.Fprintf(w, "\n%s (limiter %q", fn.id, id)
		if fn.config != "" {
			fmt.Fprintf(w, ", configuration %q", fn.config)
		}
		fmt.Fprintln(w, ")")
		for _, attr := range []string{"permits", "period", "maxWait", "enabled"} {
			src, want := source(props, id, fn.config, code, attr)
			note := ""
			if v, ok := code[attr]; ok && src != "code" {
				note = " (code: " + v + ")"
			}
			fmt.Fprintf(w, "  %-8s %-6s from %s%s\n", attr, resolved[attr], src, note)
			if want != "" && want != resolved[attr] {
				return fmt.Errorf("%s.%s: %s says %s, but the limiter has %s", id, attr, src, want, resolved[attr])
			}
		}
	}

	// A typo in a key fails NewRegistry: nothing runs with a configuration that is not
	// what it says.
	fmt.Fprintln(w)
	for _, typo := range []string{
		"instances:\n  SearchAPI.Search:\n    rateLimiter:\n      maxWiat: 1s\n",
		"configs:\n  geocoding-quota:\n    ratelimiter:\n      permits: 5\n",
	} {
		props, err := resilience.LoadYAML(strings.NewReader(typo))
		if err != nil {
			return err
		}
		_, err = resilience.NewRegistry(resilience.WithProperties(props))
		fmt.Fprintf(w, "a typo: %s\n  %v\n", strings.Join(slices.Collect(maps.Keys(props)), ", "), err)
		if ce, ok := errors.AsType[*policy.ConfigError](err); ok {
			fmt.Fprintf(w, "  code %s, key %s\n", ce.Code, ce.Key)
		}
	}
	return nil
}

// attributes returns a limiter configuration's attributes in their string form.
func attributes(c ratelimit.Config) map[string]string {
	return map[string]string{
		"permits": strconv.Itoa(c.Permits),
		"period":  c.Period.String(),
		"maxWait": c.MaxWait.String(),
		"enabled": strconv.FormatBool(!c.Disabled),
	}
}

// source returns where the value of attr comes from for the limiter id, by the precedence
// of the configuration keys, and the value it gives ("" for a built-in
// default).
func source(props map[string]string, id, configName string, code map[string]string, attr string) (src, value string) {
	keys := []string{"instances." + id + ".rateLimiter." + attr}
	if configName != "" {
		keys = append(keys, "configs."+configName+".rateLimiter."+attr)
	}
	for _, k := range keys {
		if v, ok := props[k]; ok {
			return k, v
		}
	}
	if v, ok := code[attr]; ok {
		return "code", v
	}
	if v, ok := props["defaults.rateLimiter."+attr]; ok {
		return "defaults.rateLimiter." + attr, v
	}
	return "built-in default", ""
}
