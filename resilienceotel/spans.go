package resilienceotel

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience4go/resilience4go/policy"
)

// addSpanEvent adds the span event of e's kind (policy.EventKindInfo.SpanEvent), if it
// has one, to the span of ctx, if that span is recording. The attributes are built only
// then. key says whether a keyed limiter's key is one of them.
func addSpanEvent(ctx context.Context, e policy.Event, key bool) {
	info := e.Kind.Info()
	if info.SpanEvent == "" {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent(info.SpanEvent, trace.WithAttributes(spanAttributes(e, info, key)...))
}

// spanAttributes returns the attributes of e's span event: name (the instance's id)
// always, and each of the others when e has it, the attributes of its kind's own
// (info.Attrs) converted by their SpanValue.
func spanAttributes(e policy.Event, info policy.EventKindInfo, key bool) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 6)
	kv = append(kv, attribute.String(attrName, e.Instance))
	if key && e.Key != "" {
		kv = append(kv, attribute.String(attrKey, e.Key))
	}
	if e.Attempt > 0 {
		kv = append(kv, attribute.Int(attrAttempt, e.Attempt))
	}
	if e.Wait > 0 {
		kv = append(kv, attribute.Float64(attrWait, e.Wait.Seconds()))
	}
	if e.RetryAfter > 0 {
		kv = append(kv, attribute.Float64(attrRetryAfter, e.RetryAfter.Seconds()))
	}
	for _, a := range e.Attrs {
		if a.Key == "" {
			continue
		}
		v := a.Value
		for _, d := range info.Attrs {
			if d.Key == a.Key && d.SpanValue != nil {
				v = d.SpanValue(v)
			}
		}
		kv = append(kv, spanAttribute(a.Key, v))
	}
	if e.Err != nil {
		kv = append(kv, attribute.String(attrError, e.Err.Error()))
	}
	return kv
}

// spanAttribute returns the attribute key=v: a duration in seconds (floating point), a
// time in RFC 3339 form, a value of another kind than string, number or bool as the text
// slog gives it.
func spanAttribute(key string, v slog.Value) attribute.KeyValue {
	switch v = v.Resolve(); v.Kind() {
	case slog.KindString:
		return attribute.String(key, v.String())
	case slog.KindInt64:
		return attribute.Int64(key, v.Int64())
	case slog.KindUint64:
		return attribute.Int64(key, int64(v.Uint64()))
	case slog.KindFloat64:
		return attribute.Float64(key, v.Float64())
	case slog.KindBool:
		return attribute.Bool(key, v.Bool())
	case slog.KindDuration:
		return attribute.Float64(key, v.Duration().Seconds())
	case slog.KindTime:
		return attribute.String(key, v.Time().Format(time.RFC3339Nano))
	}
	return attribute.String(key, v.String())
}
