// Command observability exports every resilience metric of a service at /metrics, in
// Prometheus' text format, through OpenTelemetry's Prometheus exporter; dashboard.json,
// beside it, is a Grafana dashboard of those series.
//
// The service looks stock up in an inventory service through four policies, composed by
// resilience.Wrap1 in the default order: a retry (3 attempts, 100ms apart, of the
// inventory's "503 Service Unavailable" only), a circuit breaker (the last 10 calls, open
// at 50% failures, for 3s), a rate limiter (10 calls per second, no wait) and a bulkhead
// (2 calls in flight, no wait). It asks a price service for quotes, asynchronously,
// through three more (resilience.WrapAsync1): a hedge (a second attempt after 50ms), a
// timeout (250ms per attempt) and an adaptive limit. A resilienceotel.Metrics observes
// the registry; its meter provider reads into a Prometheus registry of the service's own
// (not the global one), which promhttp serves.
//
//	go run ./examples/observability
//
// plays a script on a manual clock, one step a second, the same on every run: a burst of
// 25 calls, of which the rate limiter admits 10; a transient error retried; an outage
// that opens the breaker; three seconds of calls it rejects at once; a slow trial call in
// half-open; recovery; a full bulkhead; three quotes, one hedged and one past the timeout.
// It serves /metrics on a loopback port (-addr, default 127.0.0.1:0), scrapes it over
// HTTP, prints the key series and exits.
//
//	go run ./examples/observability -serve
//
// serves /metrics at 127.0.0.1:9464 (-addr) on the real clock, under a background load of
// about 12 calls per second, more than the rate limiter admits, against an inventory that
// goes down and then slow for a while every two minutes, and as many quotes, a fifth of
// them slow enough to be hedged, until Ctrl-C: point Prometheus at it (prometheus.yml)
// and import dashboard.json into Grafana. Events of level Warn and above (a breaker
// that opens, a call that failed after every attempt) are logged to stderr with
// resilienceslog.Listener; the rejections are left to the metrics.
//
//	go run ./examples/observability -svg docs/observability.svg
//
// plays the script and draws four of the dashboard's panels (available permits,
// rejections by layer, the breaker's state, latency) from the metrics read at each step.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceotel"
	"github.com/resilience4go/resilience4go/resilienceslog"
)

// Where /metrics is served by default: a free loopback port for the script, the
// Prometheus exporters' customary port with -serve.
const (
	scriptAddr = "127.0.0.1:0"
	serveAddr  = "127.0.0.1:9464"
)

var (
	addrFlag  = flag.String("addr", "", "where to serve /metrics (default "+scriptAddr+", with -serve "+serveAddr+")")
	serveFlag = flag.Bool("serve", false, "serve /metrics on the real clock under a background load until Ctrl-C")
	svgFlag   = flag.String("svg", "", "play the script and draw the dashboard's main panels to this SVG file")
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := config{addr: *addrFlag, serve: *serveFlag, svg: *svgFlag}
	if cfg.serve {
		cfg.log = os.Stderr
	}
	if _, err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "observability:", err)
		os.Exit(1)
	}
}

// config is what the flags ask for.
type config struct {
	addr  string    // where to serve /metrics; "" for the mode's default
	serve bool      // serve on the real clock until ctx ends, instead of playing the script
	svg   string    // after the script, draw the picture to this file; "" for none
	log   io.Writer // where events of level Warn and above are logged; nil: not logged
}

// run plays the script and prints what it did and what /metrics then says, or, with
// cfg.serve, serves /metrics under a background load until ctx ends. The report is the
// script's; nil with cfg.serve.
func run(ctx context.Context, w io.Writer, cfg config) (*report, error) {
	if cfg.serve {
		return nil, serve(ctx, w, cfg)
	}
	return play(ctx, w, cfg)
}

// README:begin observability

// telemetry is the service's metrics: the registry whose every policy instance reports to
// OpenTelemetry, and the /metrics handler, in Prometheus' text format.
type telemetry struct {
	registry *resilience.Registry
	handler  http.Handler
	close    func() error
}

// newTelemetry makes a registry on clk observed by resilienceotel, whose meter provider
// reads into a Prometheus registry of its own, and also into the extra readers (the
// script's ManualReader). With a logger, events are logged too.
func newTelemetry(clk clock.Clock, logger *slog.Logger, readers ...sdkmetric.Reader) (*telemetry, error) {
	promRegistry := prometheus.NewRegistry() // not the global one: /metrics serves these series only
	exporter, err := otelprom.New(otelprom.WithRegisterer(promRegistry))
	if err != nil {
		return nil, err
	}
	opts := []sdkmetric.Option{
		sdkmetric.WithReader(exporter),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "inventory-client"))),
	}
	for _, r := range readers {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	provider := sdkmetric.NewMeterProvider(opts...)
	metrics, err := resilienceotel.New(provider) // before the registry, which asks it for recorders
	if err != nil {
		return nil, errors.Join(err, provider.Shutdown(context.Background()))
	}
	regOpts := []resilience.RegistryOption{resilience.WithClock(clk), resilience.WithObserver(metrics)}
	if logger != nil {
		regOpts = append(regOpts, resilience.WithEventListener(resilienceslog.Listener(logger,
			// Rejections are counted by the metrics; the log keeps what a person should read.
			resilienceslog.Level(ratelimit.EventRejected, slog.LevelDebug),
			resilienceslog.Level(circuitbreaker.EventRejected, slog.LevelDebug),
			resilienceslog.Level(bulkhead.EventRejected, slog.LevelDebug),
			resilienceslog.Level(retry.EventAborted, slog.LevelDebug),
		)))
	}
	registry, err := resilience.NewRegistry(regOpts...)
	if err == nil {
		err = metrics.Observe(registry) // the instruments read from the registry's snapshots
	}
	closeAll := func() error {
		return errors.Join(metrics.Close(), provider.Shutdown(context.Background()))
	}
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	handler := promhttp.HandlerFor(promRegistry, promhttp.HandlerOpts{})
	return &telemetry{registry: registry, handler: handler, close: closeAll}, nil
}

// README:end observability

// README:begin observability-policies

// errUnavailable is the inventory's answer while it is down.
var errUnavailable = errors.New("inventory: 503 Service Unavailable")

// newLookup wraps the inventory's Stock with the four policies.
func newLookup(reg *resilience.Registry, inv *inventory) (func(context.Context, string) (int, error), error) {
	return resilience.Wrap1(reg, "inventory", inv.Stock,
		resilience.Retry(
			retry.MaxAttempts(3), retry.Delay(100*time.Millisecond),
			retry.On(errUnavailable), // nothing else: a rejection fails the call at once
		),
		resilience.CircuitBreaker(
			circuitbreaker.SlidingWindowSize(10), circuitbreaker.MinimumCalls(10), // the last 10 calls
			circuitbreaker.FailureRateThreshold(50),
			circuitbreaker.SlowCallThreshold(250*time.Millisecond),
			circuitbreaker.WaitInOpen(3*time.Second),
			circuitbreaker.PermittedInHalfOpen(2),
			circuitbreaker.IgnoreOn(ratelimit.ErrExceeded, bulkhead.ErrFull), // our own limits do not open it
		),
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)), // 10 calls per second, no wait
		resilience.Bulkhead(bulkhead.MaxConcurrent(2)),                               // 2 calls in flight, no wait
	)
}

// README:end observability-policies

// listen serves h's /metrics on addr and returns its URL and the function that stops it.
func listen(addr string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String() + "/metrics", func() {
		_ = srv.Shutdown(context.Background())
		<-done
	}, nil
}
