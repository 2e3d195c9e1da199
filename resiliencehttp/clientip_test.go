package resiliencehttp_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// statusWriter is a ResponseWriter that keeps only the status.
type statusWriter struct {
	h    http.Header
	code int
}

func (w *statusWriter) Header() http.Header { return w.h }
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(b), nil
}
func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

// statusOf serves one request from remote (a RemoteAddr) through h, with the header pairs,
// and returns the status.
func statusOf(h http.Handler, remote string, header ...string) int {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	w := &statusWriter{h: http.Header{}}
	h.ServeHTTP(w, r)
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// ipv6In returns the address of network (a /64) with interface id i, as a RemoteAddr.
func ipv6In(network string, i uint64) string {
	b := netip.MustParsePrefix(network).Addr().As16()
	for j := 15; j >= 8; j-- {
		b[j] = byte(i)
		i >>= 8
	}
	return "[" + netip.AddrFrom16(b).String() + "]:5000"
}

// One holder of a /64 rotating addresses gets one quota, not one per address (fault: 11
// requests from 11 addresses of one /64 all passed a limit of 10 per second).
func TestMiddleware_AddressesOfOneIPv6Slash64ShareOneQuota(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(10), ratelimit.Period(time.Second))
	h := middleware(t, k)(hello)
	for i := range 10 {
		require.Equal(t, http.StatusOK, statusOf(h, ipv6In("2001:db8:1:2::/64", uint64(i)+1)), "request %d", i+1)
	}
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, ipv6In("2001:db8:1:2::/64", 11)),
		"the 11th address of the same /64")
	assert.Equal(t, http.StatusOK, statusOf(h, ipv6In("2001:db8:1:3::/64", 1)), "the next /64 is another client")
	assert.Equal(t, 2, k.Len(), "one key per /64")
}

// A flood of addresses from one /64 is one key: it cannot fill the limiter's keys and lock
// out other clients (fault: 200,000 addresses of one /64 filled the key table, and a new
// client got 429).
func TestMiddleware_FloodFromOneSlash64DoesNotLockOutOtherClients(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(10), ratelimit.Period(time.Second))
	h := middleware(t, k)(hello)
	refused := 0
	for i := range 200_000 {
		if statusOf(h, ipv6In("2001:db8:bad:1::/64", uint64(i)*0x9e3779b97f4a7c15)) == http.StatusTooManyRequests {
			refused++
		}
	}
	assert.Equal(t, 200_000-10, refused, "the flood has one quota")
	assert.Equal(t, 1, k.Len(), "and one key")
	assert.Equal(t, http.StatusOK, statusOf(h, ipv6In("2001:db8:600d:1::/64", 1)), "a new client from another /64")
	assert.Equal(t, http.StatusOK, statusOf(h, "198.51.100.7:5000"), "a new IPv4 client")
}

// IPv6Prefix and IPv4Prefix set the network a key stands for.
func TestMiddleware_PrefixLengthsAreConfigurable(t *testing.T) {
	clk := clock.NewManual()
	k := newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	h := middleware(t, k, resiliencehttp.IPv6Prefix(128), resiliencehttp.IPv4Prefix(24))(hello)
	assert.Equal(t, http.StatusOK, statusOf(h, "[2001:db8::1]:5000"))
	assert.Equal(t, http.StatusOK, statusOf(h, "[2001:db8::2]:5000"), "/128: every address is a client")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[2001:db8::1]:6000"))
	assert.Equal(t, http.StatusOK, statusOf(h, "192.0.2.1:5000"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "192.0.2.200:5000"), "/24: one key for the network")
	assert.Equal(t, http.StatusOK, statusOf(h, "192.0.3.1:5000"))

	k = newKeyed(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Hour))
	h = middleware(t, k, resiliencehttp.IPv6Prefix(48))(hello)
	assert.Equal(t, http.StatusOK, statusOf(h, "[2001:db8:1:1::1]:5000"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[2001:db8:1:ffff::1]:5000"), "/48: one key for the site")
	assert.Equal(t, http.StatusOK, statusOf(h, "[2001:db8:2::1]:5000"))
}

// A prefix length out of range is a configuration error, never a panic (fault: no check
// of the network a key stands for).
func TestMiddleware_PrefixLengthOutOfRangeIsAConfigError(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Second))
	for _, tc := range []struct {
		name string
		opt  resiliencehttp.MiddlewareOption
	}{
		{"IPv6Prefix(0)", resiliencehttp.IPv6Prefix(0)},
		{"IPv6Prefix(129)", resiliencehttp.IPv6Prefix(129)},
		{"IPv6Prefix(-1)", resiliencehttp.IPv6Prefix(-1)},
		{"IPv4Prefix(0)", resiliencehttp.IPv4Prefix(0)},
		{"IPv4Prefix(33)", resiliencehttp.IPv4Prefix(33)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resiliencehttp.NewMiddleware(k, tc.opt)
			assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
			_, err = resiliencehttp.ClientIP(tc.opt)
			assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
		})
	}
	for _, bits := range []int{1, 128} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.IPv6Prefix(bits))
		assert.NoError(t, err, "IPv6Prefix(%d)", bits)
	}
	for _, bits := range []int{1, 32} {
		_, err := resiliencehttp.NewMiddleware(k, resiliencehttp.IPv4Prefix(bits))
		assert.NoError(t, err, "IPv4Prefix(%d)", bits)
	}
}

// One client has one key however its address is written: IPv4-mapped IPv6 is IPv4, zones
// are dropped, IPv6 text is canonical (fault: each spelling was a new client).
func TestMiddleware_AddressesAreCanonical(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Hour))
	h := middleware(t, k, resiliencehttp.IPv6Prefix(128))(hello)
	assert.Equal(t, http.StatusOK, statusOf(h, "192.0.2.1:5000"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[::ffff:192.0.2.1]:5000"), "IPv4-mapped is the IPv4 key")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[::ffff:c000:201]:5000"), "in hex too")
	assert.Equal(t, http.StatusOK, statusOf(h, "[fe80::1%eth0]:5000"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[fe80::1%eth1]:5000"), "the zone is dropped")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[FE80:0:0::1]:5000"), "canonical text")
	assert.Equal(t, 2, k.Len())
}

// Addresses from a trusted proxy's header, and the proxies themselves, are made canonical
// the same way: a mapped or zoned proxy address is trusted, and a client's spellings
// share one key (fault: header addresses were keyed as written).
func TestMiddleware_ForwardedAddressesAreCanonical(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Hour))
	h := middleware(t, k, resiliencehttp.TrustedProxies(
		netip.MustParsePrefix("::ffff:10.0.0.0/104"), // written IPv4-mapped: 10.0.0.0/8
		netip.MustParsePrefix("fe80::/10")))(hello)
	xff := "X-Forwarded-For"
	assert.Equal(t, http.StatusOK, statusOf(h, "10.0.0.1:5000", xff, "203.0.113.5"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[::ffff:10.0.0.1]:5000", xff, "::ffff:203.0.113.5"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "[fe80::9%eth0]:5000", xff, "[::ffff:203.0.113.5]:443"),
		"a proxy with a zone is trusted")
	assert.Equal(t, http.StatusOK, statusOf(h, "10.0.0.1:5000", xff, "2001:DB8:1:2::1"))
	assert.Equal(t, http.StatusTooManyRequests, statusOf(h, "10.0.0.1:5000", xff, "[2001:db8:1:2:aaaa::7%x]:80"),
		"the same /64")
	assert.Equal(t, http.StatusOK, statusOf(h, "10.0.0.1:5000", "Forwarded", `for="[2001:db8:1:2::9]"`),
		"Forwarded is not the configured header: the proxy is the client")
	assert.Equal(t, 3, k.Len(), "203.0.113.5, 2001:db8:1:2::/64 and 10.0.0.1")
}

// ClientIP walks the forwarding header from the nearest hop over the trusted proxies and
// keys the client by its network.
func TestClientIP(t *testing.T) {
	trusted := resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48"))
	for _, tc := range []struct {
		name, remote, header, value, want string
	}{
		{"no header", "10.1.1.1:5000", "X-Forwarded-For", "", "10.1.1.1"},
		{"untrusted peer: header ignored", "192.0.2.1:5000", "X-Forwarded-For", "203.0.113.5", "192.0.2.1"},
		{"one proxy", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5", "203.0.113.5"},
		{"spoofed entries on the left", "10.1.1.1:5000", "X-Forwarded-For", "1.2.3.4, 203.0.113.5", "203.0.113.5"},
		{"two proxies", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5, 10.2.2.2", "203.0.113.5"},
		{"all trusted: the farthest", "10.1.1.1:5000", "X-Forwarded-For", "10.3.3.3, 10.2.2.2", "10.3.3.3"},
		{"garbage ends the walk", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5, garbage, 10.2.2.2", "10.2.2.2"},
		{"port dropped", "10.1.1.1:5000", "X-Forwarded-For", "203.0.113.5:4711", "203.0.113.5"},
		{"IPv6 peer, IPv6 client: its /64", "[2001:db8:ffff::1]:5000", "X-Forwarded-For", "2001:db8::7", "2001:db8::/64"},
		{"mapped IPv4 peer", "[::ffff:10.1.1.1]:5000", "X-Forwarded-For", "203.0.113.5", "203.0.113.5"},
		{"mapped IPv4 client", "10.1.1.1:5000", "X-Forwarded-For", "::ffff:203.0.113.5", "203.0.113.5"},
		{"mapped IPv4 peer, untrusted", "[::ffff:192.0.2.1]:5000", "X-Forwarded-For", "203.0.113.5", "192.0.2.1"},
		{"zoned peer", "[fe80::1%eth0]:5000", "", "", "fe80::/64"},
		{"Forwarded", "10.1.1.1:5000", "Forwarded", `for=198.51.100.1, for="[2001:db8:5:6:7::17]:4711";proto=https`, "2001:db8:5:6::/64"},
		{"Forwarded unknown", "10.1.1.1:5000", "Forwarded", `for=unknown`, "10.1.1.1"},
		{"Forwarded without for", "10.1.1.1:5000", "Forwarded", `proto=https;by=10.9.9.9`, "10.1.1.1"},
		{"Forwarded, case and quotes", "10.1.1.1:5000", "Forwarded", `For="198.51.100.1"`, "198.51.100.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			if tc.value != "" {
				r.Header.Set(tc.header, tc.value)
			}
			key, err := resiliencehttp.ClientIP(trusted, resiliencehttp.ForwardedHeader(tc.header))
			require.NoError(t, err)
			assert.Equal(t, tc.want, key(r))
		})
	}
	key := func(opts ...resiliencehttp.MiddlewareOption) func(*http.Request) string {
		fn, err := resiliencehttp.ClientIP(opts...)
		require.NoError(t, err)
		return fn
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.1.1.1:5000"
	r.Header.Add("X-Forwarded-For", "203.0.113.5")
	r.Header.Add("X-Forwarded-For", "10.2.2.2")
	assert.Equal(t, "203.0.113.5", key(trusted)(r), "several header lines, in order")
	assert.Equal(t, "10.1.1.1", key()(r), "no trusted proxy: the peer")
	assert.Equal(t, "10.1.0.0/16", key(resiliencehttp.IPv4Prefix(16))(r))
	r.RemoteAddr = "[2001:db8:1:2:3:4:5:6]:5000"
	assert.Equal(t, "2001:db8:1:2:3:4:5:6", key(resiliencehttp.IPv6Prefix(128))(r))
	assert.Equal(t, "2001:db8:1::/56", key(resiliencehttp.IPv6Prefix(56))(r))
	r.RemoteAddr = "pipe"
	assert.Equal(t, "pipe", key(trusted)(r), "not an address: as written")
}

// Keys are cached by network in a fixed number of slots: many networks that share slots
// still get their own keys.
func TestClientIP_ManyNetworksKeepTheirOwnKeys(t *testing.T) {
	key, err := resiliencehttp.ClientIP()
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	seen := map[string]string{}
	for round := range 2 {
		for i := range 5000 {
			b := netip.MustParseAddr("2001:db8::").As16()
			b[4], b[5], b[6], b[7] = byte(i>>8), byte(i), 0, 1
			b[15] = byte(round + 1)
			r.RemoteAddr = "[" + netip.AddrFrom16(b).String() + "]:5000"
			got := key(r)
			b[15] = 0
			want := netip.PrefixFrom(netip.AddrFrom16(b), 64).String()
			require.Equal(t, want, got)
			if prev, ok := seen[strconv.Itoa(i)]; ok {
				require.Equal(t, prev, got)
			}
			seen[strconv.Itoa(i)] = got
		}
	}
}

// An admitted request from an IPv6 client the limiter already holds allocates nothing in
// the middleware: its /64 key is cached.
func TestMiddleware_AdmittedIPv6RequestAllocatesNothing(t *testing.T) {
	k := newKeyed(t, clock.NewManual(), ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	h := middleware(t, k, resiliencehttp.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	w := &nopWriter{h: http.Header{}}
	for _, tc := range []struct{ remote, xff string }{
		{"[2001:db8:1:2:3:4:5:6]:51234", ""},
		{"[::ffff:203.0.113.7]:51234", ""},
		{"10.0.0.1:51234", "2001:db8:1:2::9"},
		{"10.0.0.1:51234", "203.0.113.9"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		h.ServeHTTP(w, r)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }), "%s %s", tc.remote, tc.xff)
	}
}
