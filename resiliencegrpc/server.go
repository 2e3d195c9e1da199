package resiliencegrpc

import (
	"context"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/resilience4go/resilience4go/internal/clientip"
	"github.com/resilience4go/resilience4go/internal/nilcheck"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// KeyedLimiter is what Limit needs of a per-key rate limiter. *ratelimit.Keyed[string] is
// one (with a ratelimit.Backend such as ratelimit/redis, its quotas are shared by every
// replica of the server). Decide takes a permit for key without waiting and reports, for a
// refusal, RetryAfter: how long until the key's next permit. It is called concurrently,
// so it must be safe for concurrent use. A limiter that also has DecideContext(ctx
// context.Context, key string) ratelimit.Decision, as *ratelimit.Keyed[string] has, is
// called through it instead, with the call's context: its observer's recorder then sees
// the call's trace.
type KeyedLimiter interface {
	Decide(key string) ratelimit.Decision
}

// Key returns the key a call is limited by, from the call's context (its peer and incoming
// metadata) and its full method name ("/pkg.Service/Method"). It runs on every call that a
// Limit applies to, concurrently, so it must be quick and safe for concurrent use. Calls
// for which it returns the same string share one quota.
type Key func(ctx context.Context, fullMethod string) string

// ByMethod keys calls by their full method name: one quota per method, shared by every
// client.
func ByMethod(_ context.Context, fullMethod string) string { return fullMethod }

// ByMetadata keys calls by the first value of the incoming metadata name (lowercase, as
// gRPC keeps metadata keys), e.g. "x-api-key"; a call without it has the key "". Reading
// it costs one allocation per call (gRPC copies the values). The
// value is whatever the client sends: key by it only where a caller cannot pick another
// value at will (an API key that is checked before this interceptor, a tenant id set by a
// trusted gateway).
func ByMetadata(name string) Key {
	name = strings.ToLower(name)
	return func(ctx context.Context, _ string) string {
		if v := metadata.ValueFromIncomingContext(ctx, name); len(v) > 0 {
			return v[0]
		}
		return ""
	}
}

// ServerOption configures NewServer. NewServer applies the options in order and skips nil
// ones.
type ServerOption func(*Server)

// Limit limits calls with k, keyed by key: Permits per Period per key, as k is built.
// methods names what it applies to: full method names ("/pkg.Service/Method"), whole
// services ("/pkg.Service/"), or, when none are given, every method. A nil key keys calls
// by peer: the client's address, or the address that TrustedProxies forward, per network
// (IPv4Prefix, IPv6Prefix), as PeerKey does.
//
// Each call is limited by one Limit at most, the most specific that applies: one that
// names its method, else one that names its service, else one for every method, so that
// no call spends a permit of one quota and is then refused by another. Two Limits for the
// same method, service or for every method make NewServer fail with R4C-REG-010, as do a
// nil k and a malformed method name.
//
// A refused call does not reach the handler (nor a Guard): it ends with ResourceExhausted
// and a google.rpc.RetryInfo detail whose retry_delay is the exact time until the key's
// next permit, k's Decision.RetryAfter. k's MaxWait is not used: a server answers at
// once. A Limit counts the calls that reach it: one that it admits and its Guard then
// turns away (a full bulkhead) has spent its permit, as a request the server received.
func Limit(k KeyedLimiter, key Key, methods ...string) ServerOption {
	kc, _ := k.(contextDecider)
	return func(s *Server) { s.limits.add(s, &limitRule{k: k, kc: kc, key: key}, methods, nilcheck.Is(k)) }
}

// Guard runs the calls to methods (as for Limit; none: every method) through a
// composition of r's policies, built once by NewServer with resilience.Wrap1 under
// instance id id: e.g. resilience.Bulkhead or resilience.AdaptiveLimit to bound the calls
// a method runs at once, resilience.Timeout to bound how long a handler runs (for a
// stream, the whole stream; see StreamInterceptor). The listed methods share one composition, and so one
// bulkhead: give each method its own Guard, with its own id, to give it its own.
//
// The handler's errors reach the policies as they are (a breaker counts them, a fallback
// sees them) and the client as the handler returned them. A call that a policy refuses
// does not reach the handler: it ends with the status that Status maps the policy's error
// to (a full bulkhead and an adaptive limit's refusal are ResourceExhausted, a timeout
// DeadlineExceeded). As for Limit, each call goes through one Guard at most, the most
// specific. A retry in a Guard runs a unary handler again; a stream's handler runs once
// (its stream cannot be read again), so a retry gives up after it. The composition's
// result type is any, for unary calls and streams alike, so a resilience.Fallback[any]
// fits; for a stream its value is not used, and a nil error ends the stream with OK.
// Errors of the composition (R4C codes) are NewServer's, as are R4C-REG-010 for two
// Guards of the same scope, a nil r and a malformed method name. NewServer builds the
// Guards in order: when one fails, those built before it stay in r, as any wrapped
// function's policies do. A hedge cannot guard a server call (R4C-HDG-001).
func Guard(r *resilience.Registry, id string, specs []resilience.Spec, methods ...string) ServerOption {
	return func(s *Server) {
		s.guards.add(s, &guardRule{r: r, id: id, specs: specs}, methods, r == nil)
	}
}

// Exempt lets calls to these methods (full method names, or whole services ending in
// "/") through every Limit and Guard. Default none; HealthAndReflection lists the gRPC
// health and reflection services, which probes and tools call. Several calls add methods.
// A malformed name makes NewServer fail with R4C-REG-010.
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

// HealthAndReflection are the services of gRPC's health checking protocol and of server
// reflection (both versions), for Exempt.
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
}

type limitRule struct {
	k   KeyedLimiter
	kc  contextDecider // k, when it decides with a context; else nil
	key Key
}

type guardRule struct {
	r      *resilience.Registry
	id     string
	specs  []resilience.Spec
	unary  func(context.Context, unaryCall) (any, error)
	stream func(context.Context, streamCall) (any, error)
}

// NewServer builds the server-side policies from opts. Its errors are
// *policy.ConfigError: R4C-REG-010 for a nil limiter or registry, a malformed method
// name, two Limits (or two Guards) of the same scope, or an invalid trusted proxy
// prefix; R4C-ATR-007 for a prefix length out of range; and resilience.Wrap1's for a
// Guard's composition.
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
		if l.key == nil {
			l.key = s.PeerKey
		}
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

// PeerKey is the key of a call by its peer, as Limit with a nil Key uses it: the address
// of the call's connection, or, when it comes from one of the TrustedProxies, the client
// address read from the ForwardedMetadata; one key per network (IPv4Prefix, IPv6Prefix),
// written as the address ("192.0.2.1") for a full-length prefix and as the network in
// CIDR notation otherwise ("2001:db8:1:2::/64"). A peer that is not an IP address (a Unix
// socket, an in-memory listener such as bufconn) is keyed by its address's text, so all
// its clients share one key; a call without a peer has the key "". A returning client
// costs no allocation, but for a call through a trusted proxy: one, to read its
// metadata. Use it to build a Key that falls back on the peer.
func (s *Server) PeerKey(ctx context.Context, _ string) string {
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
			return handler(ctx, req)
		}
		if l != nil {
			if err := l.admit(ctx, info.FullMethod); err != nil {
				return nil, err
			}
		}
		if g == nil {
			return handler(ctx, req)
		}
		resp, err := g.unary(ctx, unaryCall{req: req, handler: handler})
		return resp, settle(err)
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
			return handler(srv, ss)
		}
		ctx := ss.Context()
		if l != nil {
			if err := l.admit(ctx, info.FullMethod); err != nil {
				return err
			}
		}
		if g == nil {
			return handler(srv, ss)
		}
		_, err := g.stream(ctx, streamCall{srv: srv, ss: ss, handler: handler, run: new(streamRun)})
		return settle(err)
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

// admit takes a permit for the call, or returns its refusal.
func (l *limitRule) admit(ctx context.Context, method string) error {
	var d ratelimit.Decision
	if l.kc != nil {
		d = l.kc.DecideContext(ctx, l.key(ctx, method))
	} else {
		d = l.k.Decide(l.key(ctx, method))
	}
	if d.Admitted {
		return nil
	}
	return &Error{err: ratelimit.ErrExceeded, limited: true, wait: d.RetryAfter}
}

// unaryCall and streamCall carry a call through a Guard's composition.
type unaryCall struct {
	req     any
	handler grpc.UnaryHandler
}

type streamCall struct {
	srv     any
	ss      grpc.ServerStream
	handler grpc.StreamHandler
	run     *streamRun
}

// streamRun is what a stream's handler left: a stream can be handled once, so a policy
// that runs the call again (a retry) gets the first run's error, never retried, instead
// of a second run on a stream that is already read.
type streamRun struct {
	done bool
	err  error
}

// handlerError marks an error that the handler returned, so that it reaches the client as
// the handler returned it, where the policies' own errors are mapped to statuses. once
// marks the error of a stream's handler: a stream is handled once, so no retry retries it
// (nor, through a timeout, the timeout's error).
type handlerError struct {
	err  error
	once bool
}

func (e *handlerError) Error() string {
	if e.err == nil {
		return "resiliencegrpc: the stream was handled already"
	}
	return e.err.Error()
}
func (e *handlerError) Unwrap() error      { return e.err }
func (e *handlerError) NeverRetried() bool { return e.once }

func runUnary(ctx context.Context, c unaryCall) (any, error) {
	resp, err := c.handler(ctx, c.req)
	if err != nil {
		return resp, &handlerError{err: err}
	}
	return resp, nil
}

func runStream(ctx context.Context, c streamCall) (any, error) {
	if c.run.done {
		return nil, &handlerError{err: c.run.err, once: true}
	}
	c.run.done = true
	ss := c.ss
	if ctx != ss.Context() {
		ss = &guardedStream{ServerStream: ss, ctx: ctx}
	}
	if err := c.handler(c.srv, ss); err != nil {
		c.run.err = err
		return nil, &handlerError{err: err, once: true} // a stream cannot be handled again
	}
	return nil, nil
}

// guardedStream is a server stream whose handler runs under a policy's context (a
// timeout's): once that context has ended, RecvMsg and SendMsg fail with its status
// instead of going on. gRPC offers no way to cut short a RecvMsg or SendMsg already
// blocked: the handler sees the end at its next one, or through Context.
type guardedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *guardedStream) Context() context.Context { return s.ctx }

func (s *guardedStream) RecvMsg(m any) error {
	if err := s.ended(); err != nil {
		return err
	}
	return s.ServerStream.RecvMsg(m)
}

func (s *guardedStream) SendMsg(m any) error {
	if err := s.ended(); err != nil {
		return err
	}
	return s.ServerStream.SendMsg(m)
}

// ended returns the status error of the policy's context once it has ended (a timeout's
// is DeadlineExceeded), else nil.
func (s *guardedStream) ended() error {
	if s.ctx.Err() == nil {
		return nil
	}
	return statusError(context.Cause(s.ctx))
}

// settle returns the handler's error as it returned it, and a policy's error as an error
// carrying its status.
func settle(err error) error {
	if err == nil {
		return nil
	}
	if h, ok := find[*handlerError](err); ok {
		return h.err
	}
	return statusError(err)
}

// scopes holds rules by what they apply to: a method, a service, or every method.
type scopes[R any] struct {
	methods  map[string]R
	services map[string]R
	all      R
	hasAll   bool
}

func (sc *scopes[R]) add(s *Server, rule R, methods []string, bad bool) {
	if bad {
		s.fail(policy.Errorf(policy.CodeBadSpec, "resiliencegrpc", "", "a Limit needs a limiter and a Guard a registry, not nil"))
		return
	}
	if len(methods) == 0 {
		if sc.hasAll {
			s.fail(policy.Errorf(policy.CodeBadSpec, "resiliencegrpc", "", "two rules of one kind apply to every method"))
		}
		sc.all, sc.hasAll = rule, true
		return
	}
	for _, m := range methods {
		if !validScope(m) || m == "" {
			s.fail(badMethod(m))
			continue
		}
		into := &sc.methods
		if strings.HasSuffix(m, "/") {
			into = &sc.services
		}
		if *into == nil {
			*into = map[string]R{}
		}
		if prev, dup := (*into)[m]; dup {
			if any(prev) == any(rule) {
				s.fail(policy.Errorf(policy.CodeBadSpec, "resiliencegrpc", m, "%s is listed twice", m))
			} else {
				s.fail(policy.Errorf(policy.CodeBadSpec, "resiliencegrpc", m, "two rules of one kind apply to %s", m))
			}
		}
		(*into)[m] = rule
	}
}

// of returns the most specific rule for method, or the zero R.
func (sc *scopes[R]) of(method string) R {
	if r, ok := sc.methods[method]; ok {
		return r
	}
	if len(sc.services) > 0 {
		if r, ok := sc.services[service(method)]; ok {
			return r
		}
	}
	return sc.all
}

// rules returns each distinct rule once.
func (sc *scopes[R]) rules() []R {
	var out []R
	seen := map[any]bool{}
	add := func(r R) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if sc.hasAll {
		add(sc.all)
	}
	for _, m := range slices.Sorted(maps.Keys(sc.services)) {
		add(sc.services[m])
	}
	for _, m := range slices.Sorted(maps.Keys(sc.methods)) {
		add(sc.methods[m])
	}
	return out
}

// service returns the service part of a full method name, with its slashes:
// "/pkg.Service/" for "/pkg.Service/Method".
func service(method string) string {
	if i := strings.LastIndexByte(method, '/'); i > 0 {
		return method[:i+1]
	}
	return ""
}

// validScope reports whether m is "/service/method" or "/service/".
func validScope(m string) bool {
	if len(m) < 3 || m[0] != '/' {
		return false
	}
	svc, meth, ok := strings.Cut(m[1:], "/")
	return ok && svc != "" && !strings.Contains(meth, "/")
}

func badMethod(m string) error {
	return policy.Errorf(policy.CodeBadSpec, "resiliencegrpc.method", m,
		`a method is named "/package.Service/Method", a whole service "/package.Service/"`)
}

// contextDecider is a KeyedLimiter that decides with the call's context.
type contextDecider interface {
	DecideContext(ctx context.Context, key string) ratelimit.Decision
}
