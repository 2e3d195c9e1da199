package resilienceslog_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resilienceslog"
)

// A registry's events as JSON lines (without their time, here): the rejection is a
// warning; the retry's attempts are debug records, which this handler leaves out, and
// its exhaustion a warning. Level makes the fallback's records warnings too.
func ExampleListener() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()),
		resilience.WithEventListener(resilienceslog.Listener(logger,
			resilienceslog.Level(fallback.EventApplied, slog.LevelWarn))))
	if err != nil {
		panic(err)
	}

	search, _ := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	_, _ = search(context.Background(), "a")
	_, _ = search(context.Background(), "b")

	fetch, _ := resilience.Wrap(reg, "Catalog.Fetch",
		func(ctx context.Context) (string, error) { return "", errors.New("connection refused") },
		resilience.Retry(retry.MaxAttempts(2), retry.Delay(100*time.Millisecond)),
		resilience.Fallback(func(ctx context.Context, err error) (string, error) { return "cached", nil }))
	fmt.Println(fetch(context.Background()))
	// Output:
	// {"level":"WARN","msg":"RateLimiterRejected","event":{"kind":"RateLimiterRejected","instance":"SearchAPI.Search","at":0,"retry_after":1000000000,"err":"ratelimit: rate limit exceeded for \"SearchAPI.Search\""}}
	// {"level":"WARN","msg":"RetryExhausted","event":{"kind":"RetryExhausted","instance":"Catalog.Fetch","at":100000000,"attempt":2,"err":"connection refused"}}
	// {"level":"WARN","msg":"FallbackApplied","event":{"kind":"FallbackApplied","instance":"Catalog.Fetch","at":100000000,"err":"connection refused"}}
	// cached <nil>
}

type requestIDKey struct{}

// requestIDHandler adds the request id that the call's context carries to each record.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

// The observer's records carry the call's context, so the handler can add the request
// id of the call that was refused.
func ExampleObserver() {
	logger := slog.New(requestIDHandler{slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})})
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()),
		resilience.WithObserver(resilienceslog.Observer(logger)))
	if err != nil {
		panic(err)
	}
	search, _ := resilience.Wrap1(reg, "SearchAPI.Search",
		func(ctx context.Context, q string) (string, error) { return "results for " + q, nil },
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	for _, id := range []string{"req-1", "req-2"} {
		_, _ = search(context.WithValue(context.Background(), requestIDKey{}, id), "q")
	}
	// Output:
	// level=WARN msg=RateLimiterRejected event.kind=RateLimiterRejected event.instance=SearchAPI.Search event.at=0s event.retry_after=1s event.err="ratelimit: rate limit exceeded for \"SearchAPI.Search\"" request_id=req-2
}
