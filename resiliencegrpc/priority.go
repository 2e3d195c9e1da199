package resiliencegrpc

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience4go/resilience4go/internal/priorityvalue"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// PriorityMetadata gives each call the priority its incoming metadata name says, for its
// Guard's policies and its handler: a bulkhead or an adaptive limit sheds the lower
// priorities first. The value is a level's name or number, as policy.ParsePriority reads
// it ("sheddable", "sheddable_plus", "critical", "critical_plus", or 0 to 3), at most 32
// bytes; the first value counts. A value above highest is lowered to highest: any client
// can send any value, so highest is what the server grants one that asks, e.g.
// policy.PriorityCritical, so that only the server itself (PriorityFunc) raises a call to
// critical_plus. A call without the metadata, or whose value names no priority, gets
// PriorityFunc's priority, or, without PriorityFunc, keeps its context's
// (policy.PriorityCritical unless an interceptor before this one set one); such a value
// is neither counted nor logged (to see them, read the metadata in a PriorityFunc with
// policy.ParsePriority). Default none: no metadata is read, and there is no default name
// (x-request-priority is a fine one). Names are compared in lowercase, as gRPC keeps
// metadata keys; a name that is not a metadata key of text ("" among them, a "-bin" or a
// "grpc-" one) makes NewServer fail with R4C-REG-010, a highest outside the levels with
// R4C-ATR-007.
//
// The priority is set for the calls a Limit admits, after it (a refused call costs
// nothing more), and for those no Limit applies to, exempt methods included. Reading the metadata costs one allocation when
// the call has it (gRPC copies the values); a call whose priority is not its context's
// costs its context, and a stream a wrapper whose Context carries it.
func PriorityMetadata(name string, highest policy.Priority) ServerOption {
	return func(s *Server) {
		key := strings.ToLower(name)
		switch {
		case !validMetadataKey(key):
			s.fail(r4c.Errorf(r4c.BadSpec, "resiliencegrpc.priorityMetadata", name,
				`the priority metadata needs a key of text, such as "x-request-priority"`))
		default:
			if err := priorityvalue.CheckHighest("resiliencegrpc.priorityMetadata", highest); err != nil {
				s.fail(err)
			}
		}
		s.prioKey, s.prioHighest = key, highest
	}
}

// PriorityFunc gives each call the priority fn returns from its context (its peer, its
// incoming metadata) and its full method name, as PriorityMetadata does; with
// PriorityMetadata, fn decides the priority of the calls whose metadata is absent or names
// none. fn is the server's code, so its priority is not capped: a value outside the
// levels is the nearest level. It runs on those calls concurrently, so it must be quick
// and safe for concurrent use. Default none; a nil fn keeps the default.
func PriorityFunc(fn func(ctx context.Context, fullMethod string) policy.Priority) ServerOption {
	return func(s *Server) {
		if fn != nil {
			s.prioFunc = fn
		}
	}
}

// prioritize returns ctx with the priority the options give the call, or ctx itself
// when they give none or the one it carries.
func (s *Server) prioritize(ctx context.Context, method string) context.Context {
	if !s.prioritizing() {
		return ctx
	}
	p, ok := s.priorityOf(ctx, method)
	if !ok || p == policy.PriorityFrom(ctx) {
		return ctx
	}
	return policy.WithPriority(ctx, p)
}

// prioritizeStream is prioritize for a stream: ss, or a wrapper of it whose Context
// carries the call's priority.
func (s *Server) prioritizeStream(ss grpc.ServerStream, method string) grpc.ServerStream {
	if !s.prioritizing() {
		return ss
	}
	ctx := ss.Context()
	if pctx := s.prioritize(ctx, method); pctx != ctx {
		return &prioritizedStream{ServerStream: ss, ctx: pctx}
	}
	return ss
}

func (s *Server) prioritizing() bool { return s.prioKey != "" || s.prioFunc != nil }

// priorityOf returns the priority of a call: its metadata's, capped, else PriorityFunc's;
// ok is false when neither gives one.
func (s *Server) priorityOf(ctx context.Context, method string) (policy.Priority, bool) {
	if s.prioKey != "" {
		if p, ok := priorityvalue.Asked(metadata.ValueFromIncomingContext(ctx, s.prioKey), s.prioHighest); ok {
			return p, true
		}
	}
	if s.prioFunc != nil {
		return priorityvalue.Nearest(s.prioFunc(ctx, method)), true
	}
	return 0, false
}

// prioritizedStream is a server stream whose Context carries the call's priority.
type prioritizedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *prioritizedStream) Context() context.Context { return s.ctx }

// validMetadataKey reports whether key, in lowercase, is the key of text metadata that a
// client may send: 0-9 a-z - _ ., not reserved by gRPC ("grpc-") nor binary ("-bin").
func validMetadataKey(key string) bool {
	if key == "" || strings.HasPrefix(key, "grpc-") || strings.HasSuffix(key, "-bin") {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// sendPriority returns ctx with the client's priority metadata set to the priority ctx
// carries, unless the caller set that metadata itself. A nil ctx is returned as is, for
// the call to fail as it would without the priority (policy.ErrNilContext).
func (c *Client) sendPriority(ctx context.Context) context.Context {
	if ctx == nil || len(metadata.ValueFromOutgoingContext(ctx, c.priority)) > 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, c.priority, policy.PriorityFrom(ctx).String())
}
