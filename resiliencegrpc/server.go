package resiliencegrpc

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/resilience4go/resilience4go/internal/clientip"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/resilience"
)

// ServerOption configures NewServer. NewServer applies the options in order and skips nil
// ones.
type ServerOption func(*Server)

// Exempt lets calls to these methods (full method names, or whole services ending in
// "/") through every Limit and Guard. Default none; HealthAndReflection lists the gRPC
// health service, which probes call, and the server reflection services, which tools
// call. Several calls add methods. A malformed name makes NewServer
// fail with R4C-REG-010.
func Exempt(methods ...string) ServerOption {
	return func(s *Server) {
		for _, m := range methods {
			if !validScope(m) || m == "" {
				s.fail(badMethod(m))
				continue
			}
			s.exempt[m] = struct{}{}
		}
	}
}

// HealthAndReflection are the service of gRPC's health checking protocol,
// "/grpc.health.v1.Health/", and those of gRPC server reflection (both versions),
// "/grpc.reflection.v1.ServerReflection/" and
// "/grpc.reflection.v1alpha.ServerReflection/", for Exempt (on the server) and
// ClientConfig.Exempt: so that a load balancer's probes are answered, and tools such as
// grpcurl can list the services, while every other method stays limited. To exempt only
// one of them, give its name to Exempt.
var HealthAndReflection = []string{
	"/grpc.health.v1.Health/",
	"/grpc.reflection.v1.ServerReflection/",
	"/grpc.reflection.v1alpha.ServerReflection/",
}

// TrustedProxies names the proxies in front of the server, by address prefix. Only a
// call whose connection comes from one of them has its peer read from the forwarding
// metadata (ForwardedMetadata): the values are walked from the nearest hop outwards, over
// the trusted proxies, to the first address that is not one. Default none: forwarding
// metadata is ignored, since any client can send it. Several calls add prefixes; an
// invalid prefix (the zero netip.Prefix, or what a failed netip.ParsePrefix returned)
// fails NewServer with R4C-REG-010. Addresses compare in canonical form (an IPv4-mapped
// address is its IPv4 address, zones are dropped).
func TrustedProxies(prefixes ...netip.Prefix) ServerOption {
	return func(s *Server) {
		for _, p := range prefixes {
			s.peers.Trust(p)
		}
	}
}

// ForwardedMetadata names the incoming metadata that the trusted proxies write:
// "x-forwarded-for" (a comma-separated list of addresses, the default) or "forwarded"
// (RFC 7239 for= parameters). Names are compared in lowercase, as gRPC keeps metadata
// keys. "" keeps the default.
func ForwardedMetadata(name string) ServerOption {
	return func(s *Server) {
		if name != "" {
			s.forwarded = strings.ToLower(name)
			s.peers.SetForwarded(s.forwarded)
		}
	}
}

// IPv4Prefix keys IPv4 peers by their network, the first bits bits of the address.
// Default 32: one key per address. Outside 1..32 NewServer fails with R4C-ATR-007.
func IPv4Prefix(bits int) ServerOption {
	return func(s *Server) { s.peers.SetIPv4Prefix(bits) }
}

// IPv6Prefix keys IPv6 peers by their network, the first bits bits of the address.
// Default 64: one key per /64, so that a client cannot multiply its quota by rotating
// through the addresses of its network. Outside 1..128 NewServer fails with R4C-ATR-007.
func IPv6Prefix(bits int) ServerOption {
	return func(s *Server) { s.peers.SetIPv6Prefix(bits) }
}

// Server holds the server-side policies: Limits, Guards and the exempt methods. Its
// UnaryInterceptor and StreamInterceptor apply them, given to grpc.NewServer with
// grpc.ChainUnaryInterceptor and grpc.ChainStreamInterceptor. Build it with NewServer. It
// is safe for concurrent use.
type Server struct {
	limits    scopes[*limitRule]
	guards    scopes[*guardRule]
	exempt    map[string]struct{}
	peers     clientip.Finder
	forwarded string
	err       error

	prioKey     string                                                   // PriorityMetadata's key; "" without it
	prioHighest policy.Priority                                          // PriorityMetadata's highest
	prioFunc    func(ctx context.Context, method string) policy.Priority // PriorityFunc's; nil without it
}

// NewServer builds the server-side policies from opts: Limits, Guards and Exempt
// methods. The Server's UnaryInterceptor and StreamInterceptor go into grpc.NewServer:
//
//	perPeer, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second))
//	if err != nil {
//		return err
//	}
//	srv, err := resiliencegrpc.NewServer(
//		resiliencegrpc.Limit(perPeer, nil),                       // 10 calls/s per peer, every method
//		resiliencegrpc.Guard(reg, "search", []resilience.Spec{     // at most 4 searches at once
//			resilience.Bulkhead(bulkhead.MaxConcurrent(4))}, "/shop.Catalog/Search"),
//		resiliencegrpc.Exempt(resiliencegrpc.HealthAndReflection...),
//	)
//	s := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(srv.UnaryInterceptor()),
//		grpc.ChainStreamInterceptor(srv.StreamInterceptor()))
//
// A Limit keys calls by peer (the connection's address, or the address forwarded by
// TrustedProxies), by method (ByMethod), by metadata (ByMetadata) or by any function of
// the call; a call whose key is "" is keyed by its peer. A call it refuses ends with
// ResourceExhausted and a google.rpc.RetryInfo detail whose retry_delay is the exact
// time until the key's next permit (RetryDelay reads it on the client), the same delay in
// the grpc-retry-pushback-ms trailer, which gRPC's own retries read in every language,
// and a message that names the method and the quota. A Guard runs a method's calls
// through a composition of a registry's policies: a bulkhead or an adaptive limit per
// method, a timeout.
//
// Its errors are *policy.ConfigError: R4C-REG-010 for a nil limiter or registry, a
// malformed method name, two Limits (or two Guards) of the same scope, or an invalid
// trusted proxy prefix; R4C-ATR-007 for a prefix length out of range; and
// resilience.Wrap1's for a Guard's composition.
func NewServer(opts ...ServerOption) (*Server, error) {
	s := &Server{exempt: map[string]struct{}{}, peers: clientip.New(), forwarded: "x-forwarded-for"}
	s.peers.SetForwarded(s.forwarded)
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	if err := s.peers.Validate("resiliencegrpc"); err != nil {
		return nil, err
	}
	for _, l := range s.limits.rules() {
		l.peer = s.peerKey
	}
	for _, g := range s.guards.rules() {
		unary, err := resilience.Wrap1(g.r, g.id, runUnary, g.specs...)
		if err != nil {
			return nil, err
		}
		stream, err := resilience.Wrap1(g.r, g.id, runStream, g.specs...)
		if err != nil {
			return nil, err
		}
		g.unary, g.stream = unary, stream
	}
	return s, nil
}

func (s *Server) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// peerKey is the key of a call by its peer, as Limit describes it.
func (s *Server) peerKey(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	var ip netip.Addr
	switch a := p.Addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		return s.peers.KeyOf(p.Addr.String(), nil)
	}
	var forwarded []string
	if s.peers.Trusted(ip) {
		forwarded = metadata.ValueFromIncomingContext(ctx, s.forwarded)
	}
	return s.peers.Key(ip, forwarded)
}

// UnaryInterceptor returns the interceptor that applies the server's policies to unary
// calls: an exempt method goes straight to the handler; otherwise the call's Limit takes a
// permit for its key, and its Guard's composition runs the handler. What a refused call
// gets is Limit's and Guard's to say.
func (s *Server) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		l, g, ok := s.route(info.FullMethod)
		if !ok {
			return handler(s.prioritize(ctx, info.FullMethod), req)
		}
		if l != nil {
			if err := l.admit(ctx, info.FullMethod); err != nil {
				return nil, refuseUnary(ctx, err)
			}
		}
		ctx = s.prioritize(ctx, info.FullMethod)
		if g == nil {
			return handler(ctx, req)
		}
		resp, err := g.unary(ctx, unaryCall{req: req, handler: handler})
		err, refusal := settle(err, info.FullMethod)
		if refusal {
			err = refuseUnary(ctx, err)
		}
		return resp, err
	}
}

// StreamInterceptor returns the interceptor that applies the server's policies to
// streams, as UnaryInterceptor does to unary calls: a stream that is refused ends with its
// status before the handler runs, so before any message is read or sent; a Guard's
// bulkhead holds its slot, and its timeout runs, for the whole stream. When the timeout
// ends, the stream's Context ends and its next RecvMsg or SendMsg fails with
// DeadlineExceeded, which ends the stream when the handler returns it; a RecvMsg already
// waiting for a message goes on waiting (gRPC cannot cut it short), so a handler that
// must end on time watches its Context.
func (s *Server) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		l, g, ok := s.route(info.FullMethod)
		if !ok {
			return handler(srv, s.prioritizeStream(ss, info.FullMethod))
		}
		if l != nil {
			if err := l.admit(ss.Context(), info.FullMethod); err != nil {
				return refuseStream(ss, err)
			}
		}
		ss = s.prioritizeStream(ss, info.FullMethod)
		ctx := ss.Context()
		if g == nil {
			return handler(srv, ss)
		}
		_, err := g.stream(ctx, streamCall{srv: srv, ss: ss, handler: handler, run: new(streamRun)})
		err, refusal := settle(err, info.FullMethod)
		if refusal {
			err = refuseStream(ss, err)
		}
		return err
	}
}

// route returns the Limit and the Guard of method; ok is false when the method is exempt
// or has neither.
func (s *Server) route(method string) (*limitRule, *guardRule, bool) {
	if len(s.exempt) > 0 {
		if _, ex := s.exempt[method]; ex {
			return nil, nil, false
		}
		if _, ex := s.exempt[service(method)]; ex {
			return nil, nil, false
		}
	}
	l, g := s.limits.of(method), s.guards.of(method)
	return l, g, l != nil || g != nil
}

// refuseUnary returns err, a unary call's refusal by a Limit or a Guard, after setting the
// grpc-retry-pushback-ms trailer of the call when err's status carries a RetryInfo: gRPC's
// own retries (a service config's retryPolicy, in any language) read that trailer, not
// the detail, and would otherwise come back after their own backoff, too early.
// The trailer is shared with the other calls refused with as many milliseconds
// (sharedPushback): the call's stream merges it into its own.
func refuseUnary(ctx context.Context, err error) error {
	if d, ok := pushbackOf(err); ok {
		_ = grpc.SetTrailer(ctx, sharedPushback(d)) // fails only for a context that is not a server call's
	}
	return err
}

// refuseStream is refuseUnary for a stream: ss's trailer carries the pushback, in a map of
// its own (ss may be another interceptor's wrapper, which might keep it).
func refuseStream(ss grpc.ServerStream, err error) error {
	if d, ok := pushbackOf(err); ok {
		ss.SetTrailer(pushback(d))
	}
	return err
}

// pushbackOf returns the delay of the grpc-retry-pushback-ms trailer of err, a refusal of
// the server's policies, and false when its status carries no RetryInfo.
func pushbackOf(err error) (time.Duration, bool) {
	e, ok := err.(*policyError)
	if !ok {
		return 0, false
	}
	return e.retryDelay()
}
