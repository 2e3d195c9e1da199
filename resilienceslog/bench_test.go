package resilienceslog_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilienceslog"
)

// A rejection logged by the listener: filtered out by the handler's level, and written
// as JSON (to io.Discard).
func BenchmarkListener(b *testing.B) {
	e := policy.Event{Kind: ratelimit.EventRejected, Instance: "SearchAPI.Search", At: time.Second,
		RetryAfter: 100 * time.Millisecond, Err: errors.New(`ratelimit: rate limit exceeded for "SearchAPI.Search"`)}
	for _, bc := range []struct {
		name  string
		level slog.Level
	}{{"filtered", slog.LevelError}, {"json", slog.LevelInfo}} {
		b.Run(bc.name, func(b *testing.B) {
			listener := resilienceslog.Listener(slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: bc.level})))
			b.ReportAllocs()
			for b.Loop() {
				listener(e)
			}
		})
	}
}

// The same rejection through the observer's recorder, with the call's context.
func BenchmarkObserverEvent(b *testing.B) {
	e := policy.Event{Kind: ratelimit.EventRejected, Instance: "SearchAPI.Search", At: time.Second,
		RetryAfter: 100 * time.Millisecond, Err: errors.New(`ratelimit: rate limit exceeded for "SearchAPI.Search"`)}
	rec := resilienceslog.Observer(slog.New(slog.NewJSONHandler(io.Discard, nil))).
		Instrument(ratelimit.Layer, "SearchAPI.Search")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rec.Event(ctx, e)
	}
}
