package resiliencegrpc_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// GR-1: 10 permits/s per peer on a manual clock; a burst of 25 unary calls gives 10 OK and
// 15 ResourceExhausted, each with the exact time to the next permit, and the handler runs
// 10 times; over bufconn (the peer is the listener's address text) and over TCP (the peer
// is 127.0.0.1); with a limiter without and with a MaxWait (which a server does not
// wait).
func TestGR1_BurstIsCutAtTheQuotaWithTheExactRetryDelay(t *testing.T) {
	limiters := map[string]func(clk clock.Clock) recordingLimiter{
		"no MaxWait": func(clk clock.Clock) recordingLimiter { return &keyRecorder{KeyedLimiter: perPeer(t, clk, 10)} },
		"MaxWait": func(clk clock.Clock) recordingLimiter {
			return &keyRecorder{KeyedLimiter: perPeer(t, clk, 10, ratelimit.MaxWait(time.Second))}
		},
	}
	for _, tc := range []struct {
		nw      network
		peerKey string
	}{{bufnet, "bufconn"}, {tcp, "127.0.0.1"}} {
		for name, limiter := range limiters {
			t.Run(string(tc.nw)+"/"+name, func(t *testing.T) {
				clk := clock.NewManual()
				keys := limiter(clk)
				srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(keys, nil))
				require.NoError(t, err)
				ts := startServer(t, tc.nw, srv)
				c := ts.client(t, nil)
				ctx := context.Background()

				ok, refused := 0, 0
				for range 25 {
					_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
					if err == nil {
						ok++
						continue
					}
					refused++
					requireRefused(t, err, 100*time.Millisecond)
				}
				assert.Equal(t, 10, ok)
				assert.Equal(t, 15, refused)
				assert.Equal(t, 10, ts.svc.count("UnaryCall"), "the handler ran for the admitted calls only")
				assert.EqualValues(t, 25, ts.svc.arrived.Load(), "every call reached the server")
				assert.Equal(t, []string{tc.peerKey}, keys.distinct())

				clk.Advance(30 * time.Millisecond)
				_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
				requireRefused(t, err, 70*time.Millisecond)

				clk.Advance(70 * time.Millisecond)
				_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
				require.NoError(t, err, "the next permit is free at 100ms")
				_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
				requireRefused(t, err, 100*time.Millisecond)
				assert.Equal(t, 11, ts.svc.count("UnaryCall"))
			})
		}
	}
}

// GR-1: a call the Limit refuses reaches neither the handler nor the Guard: the Guard's
// own rate limiter spends no permit on it.
func TestGR1_RefusedCallDoesNotReachTheGuard(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(perPeer(t, clk, 2), nil),
		resiliencegrpc.Guard(reg, "guard", []resilience.Spec{
			resilience.RateLimiter(ratelimit.Permits(100), ratelimit.Period(time.Second))}))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)

	for range 5 {
		_, _ = c.EmptyCall(context.Background(), &testpb.Empty{})
	}
	rl, err := reg.RateLimiter("guard")
	require.NoError(t, err)
	assert.Equal(t, 98, rl.Snapshot().AvailablePermits, "only the 2 admitted calls reached the Guard")
	assert.Equal(t, 2, ts.svc.count("EmptyCall"))
}

// GR-1: ByMethod keys calls by their full method name, ByMetadata by the first value of
// a metadata entry ("" without it).
func TestGR1_ByMethodAndByMetadataKeys(t *testing.T) {
	t.Run("ByMethod", func(t *testing.T) {
		clk := clock.NewManual()
		keys := &keyRecorder{KeyedLimiter: perPeer(t, clk, 1)}
		srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(keys, resiliencegrpc.ByMethod))
		require.NoError(t, err)
		ts := startServer(t, bufnet, srv)
		c1, c2 := ts.client(t, nil), ts.client(t, nil)
		ctx := context.Background()

		_, err = c1.UnaryCall(ctx, &testpb.SimpleRequest{})
		require.NoError(t, err)
		_, err = c2.UnaryCall(ctx, &testpb.SimpleRequest{})
		requireRefused(t, err, time.Second) // one quota per method, shared by every client
		_, err = c2.EmptyCall(ctx, &testpb.Empty{})
		require.NoError(t, err)
		assert.Equal(t, []string{unaryCall, emptyCall}, keys.distinct())
	})
	t.Run("ByMetadata", func(t *testing.T) {
		clk := clock.NewManual()
		keys := &keyRecorder{KeyedLimiter: perPeer(t, clk, 1)}
		srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(keys, resiliencegrpc.ByMetadata("X-API-Key")))
		require.NoError(t, err)
		c := startServer(t, bufnet, srv).client(t, nil)
		withKey := func(v ...string) context.Context {
			md := metadata.MD{}
			for _, s := range v {
				md.Append("x-api-key", s)
			}
			return metadata.NewOutgoingContext(context.Background(), md)
		}

		_, err = c.EmptyCall(withKey("a", "b"), &testpb.Empty{})
		require.NoError(t, err)
		_, err = c.EmptyCall(withKey("b"), &testpb.Empty{})
		require.NoError(t, err, "b has its own quota")
		_, err = c.EmptyCall(withKey("a"), &testpb.Empty{})
		requireRefused(t, err, time.Second)
		_, err = c.EmptyCall(context.Background(), &testpb.Empty{})
		require.NoError(t, err)
		_, err = c.EmptyCall(context.Background(), &testpb.Empty{})
		requireRefused(t, err, time.Second)
		assert.Equal(t, []string{"a", "b", "bufconn"}, keys.distinct(), "a call without the metadata is keyed by its peer")
	})
}

// GR-2: each call is limited by the most specific Limit (method > service > every method)
// and by that one only: the calls to a method with its own Limit spend nothing of the
// service's or of the server's quota.
func TestGR2_MostSpecificLimitAloneApplies(t *testing.T) {
	clk := clock.NewManual()
	all, svc, method := perPeer(t, clk, 1), perPeer(t, clk, 2), perPeer(t, clk, 3)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(method, nil, unaryCall),
		resiliencegrpc.Limit(all, nil),
		resiliencegrpc.Limit(svc, nil, wholeService))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv, withHealth)
	conn := ts.dial(t, nil)
	c, hc := testpb.NewTestServiceClient(conn), healthpb.NewHealthClient(conn)
	ctx := context.Background()

	admitted := func(call func() error) int {
		n := 0
		for range 10 {
			if err := call(); err == nil {
				n++
			} else {
				require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
			}
		}
		return n
	}
	assert.Equal(t, 3, admitted(func() error { _, err := c.UnaryCall(ctx, &testpb.SimpleRequest{}); return err }))
	assert.Equal(t, 2, admitted(func() error { _, err := c.EmptyCall(ctx, &testpb.Empty{}); return err }))
	assert.Equal(t, 1, admitted(func() error { _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); return err }))
}

// GR-2: each call goes through the most specific Guard only; here each Guard holds a rate
// limiter of its own, whose refusal is ResourceExhausted with its RetryInfo (GR-4).
func TestGR2_MostSpecificGuardAloneApplies(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	guard := func(id string, permits int, methods ...string) resiliencegrpc.ServerOption {
		return resiliencegrpc.Guard(reg, id, []resilience.Spec{
			resilience.RateLimiter(ratelimit.Permits(permits), ratelimit.Period(time.Second))}, methods...)
	}
	srv, err := resiliencegrpc.NewServer(
		guard("all", 1), guard("service", 2, wholeService), guard("method", 4, unaryCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv, withHealth)
	conn := ts.dial(t, nil)
	c, hc := testpb.NewTestServiceClient(conn), healthpb.NewHealthClient(conn)
	ctx := context.Background()

	for range 4 {
		_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
		require.NoError(t, err)
	}
	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	requireRefused(t, err, 250*time.Millisecond) // the method's Guard: 4 per second
	for range 2 {
		_, err := c.EmptyCall(ctx, &testpb.Empty{})
		require.NoError(t, err)
	}
	_, err = c.EmptyCall(ctx, &testpb.Empty{})
	requireRefused(t, err, 500*time.Millisecond) // the service's Guard: 2 per second
	_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{})
	requireRefused(t, err, time.Second)

	for id, left := range map[string]int{"all": 0, "service": 0, "method": 0} {
		rl, err := reg.RateLimiter(id)
		require.NoError(t, err)
		assert.Equal(t, left, rl.Snapshot().AvailablePermits, id)
	}
	assert.Equal(t, 4, ts.svc.count("UnaryCall"))
	assert.Equal(t, 2, ts.svc.count("EmptyCall"))
}

// GR-2: a call with a Limit and a Guard takes one permit of the Limit and goes through
// the Guard once; the permit of a call the Guard refuses is spent (GR-11).
func TestGR2_OneLimitAndOneGuardPerCall(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(&keyRecorder{KeyedLimiter: perPeer(t, clk, 4)}, nil, unaryCall),
		resiliencegrpc.Guard(reg, "g", []resilience.Spec{
			resilience.RateLimiter(ratelimit.Permits(2), ratelimit.Period(time.Second))}, wholeService))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	ctx := context.Background()

	for range 2 {
		_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
		require.NoError(t, err)
	}
	for range 2 { // the Limit admits the third and fourth calls, the Guard's limiter refuses them
		_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
		requireRefused(t, err, 500*time.Millisecond)
	}
	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	requireRefused(t, err, 250*time.Millisecond) // the Limit: 4 per second, all 4 taken
	assert.Equal(t, 2, ts.svc.count("UnaryCall"))
}

// GR-2: exempt methods (by name or by service) bypass every Limit and Guard.
func TestGR2_ExemptMethodsBypassLimitsAndGuards(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(perPeer(t, clk, 1), nil),
		resiliencegrpc.Guard(reg, "g", []resilience.Spec{
			resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second))}),
		resiliencegrpc.Exempt(emptyCall),
		resiliencegrpc.Exempt(resiliencegrpc.HealthAndReflection...))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv, withHealth)
	conn := ts.dial(t, nil)
	c, hc := testpb.NewTestServiceClient(conn), healthpb.NewHealthClient(conn)
	ctx := context.Background()

	for range 20 {
		_, err := c.EmptyCall(ctx, &testpb.Empty{})
		require.NoError(t, err)
		_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
	}
	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.NoError(t, err)
	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	rl, err := reg.RateLimiter("g")
	require.NoError(t, err)
	assert.Equal(t, 0, rl.Snapshot().AvailablePermits, "the Guard saw the one admitted UnaryCall only")
}

// GR-2: with Exempt(HealthAndReflection...) and a per-peer Limit, the health service's
// Check and Watch are never refused, while the Limit holds for the other methods.
func TestGR2_HealthIsNeverRefused(t *testing.T) {
	clk := clock.NewManual()
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(perPeer(t, clk, 1), nil),
		resiliencegrpc.Exempt(resiliencegrpc.HealthAndReflection...))
	require.NoError(t, err)
	ts := startServer(t, tcp, srv, withHealth)
	conn := ts.dial(t, nil)
	c, hc := testpb.NewTestServiceClient(conn), healthpb.NewHealthClient(conn)
	ctx := context.Background()

	_, err = c.EmptyCall(ctx, &testpb.Empty{})
	require.NoError(t, err)
	_, err = c.EmptyCall(ctx, &testpb.Empty{})
	requireRefused(t, err, time.Second)
	for range 50 {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := hc.Watch(wctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	resp, err := w.Recv()
	require.NoError(t, err, "the Watch stream is exempt too")
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	cancel()
	_, err = w.Recv()
	assert.Equal(t, codes.Canceled, status.Code(err))
}

// GR-2: two Limits or two Guards of one scope, a nil limiter or registry, a malformed
// method name (in Limit, Guard or Exempt) and a bad Guard composition make NewServer fail
// with a *policy.ConfigError and its code.
func TestGR2_NewServerConfigErrors(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	k1, k2 := perPeer(t, clk, 1), perPeer(t, clk, 1)
	bh := []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(1))}
	var nilKeyed *keyed.Limiter[string]
	for _, tc := range []struct {
		name string
		opts []resiliencegrpc.ServerOption
		code string
	}{
		{"nil limiter", []resiliencegrpc.ServerOption{resiliencegrpc.Limit(nil, nil)}, r4c.BadSpec},
		{"typed nil limiter", []resiliencegrpc.ServerOption{resiliencegrpc.Limit(nilKeyed, nil)}, r4c.BadSpec},
		{"nil registry", []resiliencegrpc.ServerOption{resiliencegrpc.Guard(nil, "g", bh)}, r4c.BadSpec},
		{"two Limits for every method", []resiliencegrpc.ServerOption{
			resiliencegrpc.Limit(k1, nil), resiliencegrpc.Limit(k2, resiliencegrpc.ByMethod)}, r4c.BadSpec},
		{"two Limits for one service", []resiliencegrpc.ServerOption{
			resiliencegrpc.Limit(k1, nil, wholeService), resiliencegrpc.Limit(k2, nil, wholeService)}, r4c.BadSpec},
		{"two Limits for one method", []resiliencegrpc.ServerOption{
			resiliencegrpc.Limit(k1, nil, unaryCall), resiliencegrpc.Limit(k2, nil, emptyCall, unaryCall)}, r4c.BadSpec},
		{"one method twice in one Limit", []resiliencegrpc.ServerOption{
			resiliencegrpc.Limit(k1, nil, unaryCall, unaryCall)}, r4c.BadSpec},
		{"two Guards for every method", []resiliencegrpc.ServerOption{
			resiliencegrpc.Guard(reg, "a", bh), resiliencegrpc.Guard(reg, "b", bh)}, r4c.BadSpec},
		{"two Guards for one method", []resiliencegrpc.ServerOption{
			resiliencegrpc.Guard(reg, "a", bh, unaryCall), resiliencegrpc.Guard(reg, "b", bh, unaryCall)}, r4c.BadSpec},
		{"Guard with a hedge", []resiliencegrpc.ServerOption{
			resiliencegrpc.Guard(reg, "h", []resilience.Spec{resilience.Hedge(hedge.MaxAttempts(2))})}, "R4C-HDG-001"},
		{"Guard with a bad bulkhead", []resiliencegrpc.ServerOption{
			resiliencegrpc.Guard(reg, "bad", []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(-1))})}, r4c.OutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resiliencegrpc.NewServer(tc.opts...)
			require.Error(t, err)
			assert.Nil(t, s)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, r4c.CodeOf(err), "%v", err)
		})
	}
	for _, m := range []string{"", "/", "//", "UnaryCall", "grpc.testing.TestService/UnaryCall",
		"/grpc.testing.TestService", "//UnaryCall", "/grpc.testing.TestService/Unary/Call"} {
		for name, opt := range map[string]resiliencegrpc.ServerOption{
			"Limit":  resiliencegrpc.Limit(k1, nil, m),
			"Guard":  resiliencegrpc.Guard(reg, "m", bh, m),
			"Exempt": resiliencegrpc.Exempt(m),
		} {
			_, err := resiliencegrpc.NewServer(opt)
			assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "%s(%q): %v", name, m, err)
		}
	}
	s, err := resiliencegrpc.NewServer(nil, resiliencegrpc.Exempt(), resiliencegrpc.TrustedProxies())
	require.NoError(t, err, "nil options, no methods and no prefixes are skipped")
	require.NotNil(t, s)

	// An invalid prefix would trust no proxy where the caller meant one (fault: it was
	// skipped without a word, and every client behind the proxy shared its address).
	_, err = resiliencegrpc.NewServer(resiliencegrpc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.Prefix{}))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.BadSpec, ce.Code)
	assert.Equal(t, "resiliencegrpc.trustedProxies", ce.Key)
}

// GR-3: IPv4 prefixes outside 1..32 and IPv6 prefixes outside 1..128 are R4C-ATR-007.
func TestGR3_PrefixLengthOutOfRangeIsATR007(t *testing.T) {
	for _, opt := range []resiliencegrpc.ServerOption{resiliencegrpc.IPv4Prefix(0), resiliencegrpc.IPv4Prefix(33),
		resiliencegrpc.IPv6Prefix(0), resiliencegrpc.IPv6Prefix(129), resiliencegrpc.IPv4Prefix(-1)} {
		_, err := resiliencegrpc.NewServer(opt)
		assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err), "%v", err)
	}
	for _, opt := range []resiliencegrpc.ServerOption{resiliencegrpc.IPv4Prefix(1), resiliencegrpc.IPv4Prefix(32),
		resiliencegrpc.IPv6Prefix(1), resiliencegrpc.IPv6Prefix(128)} {
		_, err := resiliencegrpc.NewServer(opt)
		assert.NoError(t, err)
	}
}

// peerCtx returns an incoming context from addr with the metadata pairs kv.
func peerCtx(addr net.Addr, kv ...string) context.Context {
	ctx := context.Background()
	if addr != nil {
		ctx = peer.NewContext(ctx, &peer.Peer{Addr: addr})
	}
	if len(kv) > 0 {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(kv...))
	}
	return ctx
}

func tcpAddr(s string) *net.TCPAddr { return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)) }

// GR-3: the peer key is the connection's address per network; the forwarded metadata is
// read only when the connection comes from a trusted proxy.
func TestGR3_PeerKey(t *testing.T) {
	trusted := []resiliencegrpc.ServerOption{resiliencegrpc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))}
	for _, tc := range []struct {
		name string
		opts []resiliencegrpc.ServerOption
		ctx  context.Context
		want string
	}{
		{"no peer", nil, context.Background(), ""},
		{"IPv4", nil, peerCtx(tcpAddr("192.0.2.1:5000")), "192.0.2.1"},
		{"IPv4 /24", []resiliencegrpc.ServerOption{resiliencegrpc.IPv4Prefix(24)}, peerCtx(tcpAddr("192.0.2.77:5000")), "192.0.2.0/24"},
		{"IPv6 /64", nil, peerCtx(tcpAddr("[2001:db8:1:2:3:4:5:6]:5000")), "2001:db8:1:2::/64"},
		{"IPv6 /128", []resiliencegrpc.ServerOption{resiliencegrpc.IPv6Prefix(128)}, peerCtx(tcpAddr("[2001:db8::1]:5000")), "2001:db8::1"},
		{"IPv4-mapped IPv6", nil, peerCtx(&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.9"), Port: 1}), "192.0.2.9"},
		{"UDP", nil, peerCtx(&net.UDPAddr{IP: net.ParseIP("192.0.2.3"), Port: 53}), "192.0.2.3"},
		{"Unix socket", nil, peerCtx(&net.UnixAddr{Name: "/run/app.sock", Net: "unix"}), "/run/app.sock"},
		{"forwarded from an untrusted peer", nil,
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "198.51.100.7"), "10.0.0.1"},
		{"forwarded by a trusted proxy", trusted,
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "198.51.100.7"), "198.51.100.7"},
		{"forwarded through two trusted proxies", trusted,
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "203.0.113.5, 198.51.100.7, 10.0.0.2"), "198.51.100.7"},
		{"trusted proxy, no forwarded metadata", trusted, peerCtx(tcpAddr("10.0.0.1:5000")), "10.0.0.1"},
		{"forwarded to a peer outside the trusted proxies", trusted,
			peerCtx(tcpAddr("192.0.2.1:5000"), "x-forwarded-for", "198.51.100.7"), "192.0.2.1"},
		{"RFC 7239 Forwarded", append(trusted, resiliencegrpc.ForwardedMetadata("Forwarded")),
			peerCtx(tcpAddr("10.0.0.1:5000"), "forwarded", `for="[2001:db8::7]:80";proto=https`), "2001:db8::/64"},
		{"ForwardedMetadata(\"\") keeps x-forwarded-for", append(trusted, resiliencegrpc.ForwardedMetadata("")),
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "198.51.100.7"), "198.51.100.7"},
		{"an IPv4-mapped trusted prefix", []resiliencegrpc.ServerOption{resiliencegrpc.TrustedProxies(netip.MustParsePrefix("::ffff:10.0.0.0/104"))},
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "198.51.100.7"), "198.51.100.7"},
		{"a forwarded entry that is not an address", trusted,
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "198.51.100.7, unknown"), "10.0.0.1"},
		{"X-Forwarded-For ignored when Forwarded is read", append(trusted, resiliencegrpc.ForwardedMetadata("forwarded")),
			peerCtx(tcpAddr("10.0.0.1:5000"), "x-forwarded-for", "198.51.100.7"), "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resiliencegrpc.NewServer(tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.PeerKey(tc.ctx, unaryCall))
		})
	}
}

// GR-3: the key of a returning client costs no allocation, with or without
// TrustedProxies, when the peer is not a trusted proxy; through a trusted proxy, one (gRPC
// copies the forwarded metadata's values).
func TestGR3_PeerKeyOfAReturningClientAllocatesNothing(t *testing.T) {
	plain, err := resiliencegrpc.NewServer()
	require.NoError(t, err)
	trusting, err := resiliencegrpc.NewServer(resiliencegrpc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
	require.NoError(t, err)
	for _, s := range []*resiliencegrpc.Server{plain, trusting} {
		for _, addr := range []string{"192.0.2.1:5000", "[2001:db8:1:2::9]:5000"} {
			ctx := peerCtx(tcpAddr(addr), "x-forwarded-for", "198.51.100.7")
			_ = s.PeerKey(ctx, unaryCall)
			allocs := testing.AllocsPerRun(100, func() { _ = s.PeerKey(ctx, unaryCall) })
			assert.Zero(t, allocs, addr)
		}
	}
	ctx := peerCtx(tcpAddr("10.1.2.3:5000"), "x-forwarded-for", "198.51.100.7")
	require.Equal(t, "198.51.100.7", trusting.PeerKey(ctx, unaryCall))
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _ = trusting.PeerKey(ctx, unaryCall) }))
}

// GR-3: behind a trusted proxy (the TCP peer 127.0.0.1 with TrustedProxies(127.0.0.0/8)),
// two clients with different x-forwarded-for addresses have a quota each; without
// TrustedProxies, or trusting other proxies only, they share the proxy's.
func TestGR3_ForwardedClientsBehindATrustedProxyHaveTheirOwnQuotas(t *testing.T) {
	forwardedFor := func(addr string) grpc.DialOption {
		return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, "x-forwarded-for", addr), method, req, reply, cc, opts...)
		})
	}
	for _, tc := range []struct {
		name     string
		opts     []resiliencegrpc.ServerOption
		admitted int
		keys     []string
	}{
		{"trusted", []resiliencegrpc.ServerOption{resiliencegrpc.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8"))},
			4, []string{"192.0.2.1", "192.0.2.2"}},
		{"untrusted", nil, 2, []string{"127.0.0.1"}},
		{"another proxy trusted", []resiliencegrpc.ServerOption{resiliencegrpc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))},
			2, []string{"127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual()
			keys := &keyRecorder{KeyedLimiter: perPeer(t, clk, 2)}
			srv, err := resiliencegrpc.NewServer(append(tc.opts, resiliencegrpc.Limit(keys, nil))...)
			require.NoError(t, err)
			ts := startServer(t, tcp, srv)
			a := testpb.NewTestServiceClient(ts.dial(t, nil, forwardedFor("192.0.2.1")))
			b := testpb.NewTestServiceClient(ts.dial(t, nil, forwardedFor("192.0.2.2")))
			admitted := 0
			for range 3 {
				for _, c := range []testpb.TestServiceClient{a, b} {
					_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
					if err == nil {
						admitted++
					} else {
						requireRefused(t, err, 500*time.Millisecond)
					}
				}
			}
			assert.Equal(t, tc.admitted, admitted)
			assert.Equal(t, tc.keys, keys.distinct())
		})
	}
}

// GR-4: with a Guard of one bulkhead slot on UnaryCall, a second call while the first is
// parked in the handler is ResourceExhausted (no RetryInfo), before the handler; other
// methods are unaffected, and the slot is free again once the first call ends.
func TestGR4_FullBulkheadIsResourceExhausted(t *testing.T) {
	reg, rec := newRegistry(t, clock.NewManual())
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "unary",
		[]resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(1))}, unaryCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	ctx := context.Background()
	g := ts.svc.park("UnaryCall")

	first := make(chan error, 1)
	go func() {
		_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
		first <- err
	}()
	receive(t, g.entered, "the first call in the handler")

	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Equal(t, `resiliencegrpc: /grpc.testing.TestService/UnaryCall: bulkhead: bulkhead "unary" is full`,
		status.Convert(err).Message(), "the method, then the policy's error")
	assert.NotErrorIs(t, err, bulkhead.ErrFull, "the client sees the status only")
	_, has := resiliencegrpc.RetryDelay(err)
	assert.False(t, has, "a full bulkhead cannot tell when a slot frees")
	assert.Equal(t, 1, ts.svc.count("UnaryCall"))
	assert.Equal(t, 1, rec.Count(bulkhead.EventRejected))

	for range 3 {
		_, err := c.EmptyCall(ctx, &testpb.Empty{})
		require.NoError(t, err, "EmptyCall has no Guard")
	}

	g.open()
	require.NoError(t, receive(t, first, "the first call's end"))
	_, err = c.UnaryCall(ctx, &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, 2, ts.svc.count("UnaryCall"))
}

// GR-4: a Guard's timeout ends a handler that honours its context with DeadlineExceeded.
func TestGR4_GuardTimeoutIsDeadlineExceeded(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "slow",
		[]resilience.Spec{resilience.Timeout(time.Second)}, unaryCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	g := ts.svc.park("UnaryCall")

	done := callUnary(c)
	receive(t, g.entered, "the call in the handler")
	clk.Advance(time.Second)
	err = receive(t, done, "the call's end")
	require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
	assert.Equal(t, 1, rec.Count(timeout.EventExceeded))
	await(t, ts.svc.ended, "UnaryCall")
}

// GR-4: the handler's own errors reach the client unchanged, through a Guard: code,
// message and details; a plain error is Unknown with its text, as gRPC makes it.
func TestGR4_HandlerErrorsReachTheClientUnchanged(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "g",
		[]resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(4))}))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)

	withDelay := failsWithDelay(codes.Unavailable, 3*time.Second)
	ts.svc.script("UnaryCall", fails(codes.NotFound), withDelay, reply{err: errors.New("plain failure")},
		reply{err: status.Error(codes.ResourceExhausted, "my own quota")})

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.NotFound, status.Code(err))
	assert.Equal(t, "scripted NotFound", status.Convert(err).Message())

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	d, ok := resiliencegrpc.RetryDelay(err)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unknown, status.Code(err))
	assert.Equal(t, "plain failure", status.Convert(err).Message())

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Equal(t, "my own quota", status.Convert(err).Message())
	_, ok = resiliencegrpc.RetryDelay(err)
	assert.False(t, ok)
}

// GR-1: the server interceptors called directly: a Limit's refusal is an *Error carrying
// its status and unwrapping to the policy's error; the handler is not called.
func TestGR1_ServerInterceptorRefusalsAreErrors(t *testing.T) {
	clk := clock.NewManual()
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clk, 1), resiliencegrpc.ByMethod))
	require.NoError(t, err)
	unary := srv.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
	calls := 0
	handler := func(context.Context, any) (any, error) { calls++; return "resp", nil }

	resp, err := unary(context.Background(), nil, info, handler)
	require.NoError(t, err)
	assert.Equal(t, "resp", resp)
	resp, err = unary(context.Background(), nil, info, handler)
	assert.Nil(t, resp)
	var re *resiliencegrpc.Error
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	requireRefused(t, err, time.Second)
	assert.Equal(t, 1, calls)

	stream := srv.StreamInterceptor()
	sinfo := &grpc.StreamServerInfo{FullMethod: outputCall, IsServerStream: true}
	streamed := 0
	sh := func(any, grpc.ServerStream) error { streamed++; return nil }
	ss := &fakeServerStream{ctx: context.Background()}
	require.NoError(t, stream(nil, ss, sinfo, sh))
	err = stream(nil, ss, sinfo, sh)
	require.ErrorAs(t, err, &re)
	requireRefused(t, err, time.Second)
	assert.Equal(t, 1, streamed)
	assert.Equal(t, []string{"1000"}, ss.trailer.Get("grpc-retry-pushback-ms"), "GR-13")
}

// fakeServerStream is a grpc.ServerStream with a context and a trailer, and nothing else.
type fakeServerStream struct {
	grpc.ServerStream
	ctx     context.Context
	trailer metadata.MD
}

func (s *fakeServerStream) Context() context.Context { return s.ctx }

func (s *fakeServerStream) SetTrailer(md metadata.MD) { s.trailer = metadata.Join(s.trailer, md) }

// GR-1: concurrent calls from many goroutines share the quota exactly: 10 permits, 40
// calls at once, 10 admitted.
func TestGR1_ConcurrentBurstIsCutAtTheQuota(t *testing.T) {
	clk := clock.NewManual()
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clk, 10), nil))
	require.NoError(t, err)
	ts := startServer(t, tcp, srv)
	c := ts.client(t, nil)

	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			mu.Lock()
			codesSeen[status.Code(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Equal(t, map[codes.Code]int{codes.OK: 10, codes.ResourceExhausted: 30}, codesSeen)
	assert.Equal(t, 10, ts.svc.count("UnaryCall"))
}

// BenchmarkServerUnaryInterceptor measures an admitted call through a per-peer Limit and a
// Guard's bulkhead, the interceptor called directly (no network).
func BenchmarkServerUnaryInterceptor(b *testing.B) {
	reg, err := resilience.NewRegistry()
	require.NoError(b, err)
	k, err := keyed.New[string](ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		opts []resiliencegrpc.ServerOption
	}{
		{"Limit", []resiliencegrpc.ServerOption{resiliencegrpc.Limit(k, nil)}},
		{"Limit+Guard", []resiliencegrpc.ServerOption{resiliencegrpc.Limit(k, nil),
			resiliencegrpc.Guard(reg, "bench", []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(100))})}},
		{"Exempt", []resiliencegrpc.ServerOption{resiliencegrpc.Limit(k, nil), resiliencegrpc.Exempt(wholeService)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, err := resiliencegrpc.NewServer(bc.opts...)
			require.NoError(b, err)
			unary := srv.UnaryInterceptor()
			ctx := peerCtx(tcpAddr("192.0.2.1:5000"))
			info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
			handler := func(context.Context, any) (any, error) { return nil, nil }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := unary(ctx, nil, info, handler); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// GR-1: a call admitted by a per-peer Limit (a *keyed.Limiter)
// costs no allocation in the interceptor, for a returning client.
func TestGR1_AdmittedCallAllocatesNothing(t *testing.T) {
	k, err := keyed.New[string](ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	require.NoError(t, err)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(k, nil))
	require.NoError(t, err)
	unary := srv.UnaryInterceptor()
	ctx := peerCtx(tcpAddr("192.0.2.1:5000"))
	info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	_, _ = unary(ctx, nil, info, handler)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = unary(ctx, nil, info, handler) }))
}
