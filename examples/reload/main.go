// Command reload serves a search function guarded by a rate limiter whose quota comes from
// a properties file, and reloads the file when the process receives SIGHUP: the running
// limiter takes the new quota from its next call, and the program prints what changed,
// from the ConfigChanged events. A file with a mistake (a typo in a key, a bad value)
// changes nothing, and the error says why.
//
//	go run ./examples/reload [file]
//
// Without a file it serves a copy of reload.properties, written to a temporary directory.
// Edit the file, then send the process SIGHUP (the command to do so is printed at start)
// to reload it; Ctrl-C stops it. At start and after each SIGHUP it makes one second of
// calls, one every 20ms, on a manual clock, so its output is the same on every run.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

//go:embed reload.properties
var defaultProperties string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	if err := start(ctx, os.Args[1:], hup); err != nil {
		fmt.Fprintln(os.Stderr, "reload:", err)
		os.Exit(1)
	}
}

// start serves the file named by args, or a copy of reload.properties, until ctx ends.
func start(ctx context.Context, args []string, hup <-chan os.Signal) error {
	var path string
	switch len(args) {
	case 0:
		dir, err := os.MkdirTemp("", "reload")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "reload.properties")
		if err := os.WriteFile(path, []byte(defaultProperties), 0o644); err != nil {
			return err
		}
	case 1:
		path = args[0]
	default:
		return fmt.Errorf("usage: reload [file]")
	}
	fmt.Fprintf(os.Stderr, "reload: edit %s, then run kill -HUP %d to reload it; Ctrl-C stops\n", path, os.Getpid())
	return run(ctx, os.Stdout, path, hup)
}

// run builds a registry from the properties file at path and makes a second of calls;
// then, at each signal from hup, it reloads the file and makes another second of calls,
// until ctx ends.
func run(ctx context.Context, w io.Writer, path string, hup <-chan os.Signal) error {
	s, err := newServer(w, path)
	if err != nil {
		return err
	}
	s.second(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			s.reload()
			s.second(ctx)
		}
	}
}

// server is the example's service: its registry, built from the file at path, and the
// search function, guarded by the rate limiter SearchAPI.Search.
type server struct {
	w       io.Writer
	path    string
	clk     *clock.Manual
	reg     *resilience.Registry
	search  func(context.Context, string) (string, error)
	changed []policy.Event // the ConfigChanged events of the last reload
}

func newServer(w io.Writer, path string) (*server, error) {
	props, err := load(path)
	if err != nil {
		return nil, err
	}
	s := &server{w: w, path: path, clk: clock.NewManual()}
	s.reg, err = resilience.NewRegistry(resilience.WithClock(s.clk), resilience.WithProperties(props),
		resilience.WithEventListener(func(e policy.Event) {
			if e.Kind == policy.ConfigChanged {
				s.changed = append(s.changed, e)
			}
		}))
	if err != nil {
		return nil, err
	}
	s.search, err = resilience.Wrap1(s.reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.RateLimiter())
	if err != nil {
		return nil, err
	}
	return s, nil
}

// load reads the configuration keys of the properties file at path.
func load(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return resilience.LoadProperties(f)
}

// README:begin reload
// reload reads the file again and applies it to the running limiter, all or nothing;
// it prints what changed, from the ConfigChanged events, or why nothing did.
func (s *server) reload() {
	fmt.Fprintf(s.w, "SIGHUP: reloading %s\n", filepath.Base(s.path))
	s.changed = nil
	props, err := load(s.path)
	if err == nil {
		err = s.reg.Reload(props)
	}
	switch {
	case err != nil:
		fmt.Fprintf(s.w, "  nothing changed: %v\n", err)
	case len(s.changed) == 0:
		fmt.Fprintln(s.w, "  no setting changed")
	}
	for _, e := range s.changed {
		fmt.Fprintf(s.w, "  %s: %s changed\n", e.Instance, strings.Join(e.Changed, ", "))
	}
}

// README:end reload

// second makes one second of calls, one every 20ms on the manual clock, and prints how
// many passed, with the limiter's configuration.
func (s *server) second(ctx context.Context) {
	passed := 0
	for i := range 50 {
		if _, err := s.search(ctx, fmt.Sprint("q", i)); err == nil {
			passed++
		}
		s.clk.Advance(20 * time.Millisecond)
	}
	lim, err := resilience.Lookup[*ratelimit.Limiter](s.reg, ratelimit.Layer, "SearchAPI.Search")
	if err != nil {
		fmt.Fprintf(s.w, "  %v\n", err)
		return
	}
	c := lim.Config()
	fmt.Fprintf(s.w, "%4v  %d permits per %v: %d of 50 calls passed in the last second\n",
		s.clk.Now(), c.Permits, c.Period, passed)
}
