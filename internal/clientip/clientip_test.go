package clientip_test

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/clientip"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// finder returns a validated Finder set up by setup.
func finder(t testing.TB, setup func(f *clientip.Finder)) *clientip.Finder {
	t.Helper()
	f := clientip.New()
	if setup != nil {
		setup(&f)
	}
	require.NoError(t, f.Validate("test"))
	return &f
}

// trusting trusts 10.0.0.0/8 and 2001:db8:ffff::/48, as the proxies of the tests.
func trusting(f *clientip.Finder) {
	f.Trust(netip.MustParsePrefix("10.0.0.0/8"))
	f.Trust(netip.MustParsePrefix("2001:db8:ffff::/48"))
}

// The defaults: no trusted proxy (forwarded values are ignored), one key per IPv4
// address, one per IPv6 /64.
func TestNew_Defaults(t *testing.T) {
	f := finder(t, nil)
	assert.False(t, f.Trusting())
	assert.Equal(t, "192.0.2.1", f.KeyOf("192.0.2.1:5000", []string{"203.0.113.5"}), "forwarded values ignored")
	assert.Equal(t, "2001:db8:1:2::/64", f.KeyOf("[2001:db8:1:2:3:4:5:6]:5000", nil))
	assert.Equal(t, "192.0.2.1", f.Key(netip.MustParseAddr("192.0.2.1"), []string{"203.0.113.5"}))
	assert.Equal(t, "2001:db8:1:2::/64", f.Key(netip.MustParseAddr("2001:db8:1:2:3:4:5:6"), nil))
}

// Trust makes prefixes canonical, as the addresses matched against them are: an
// IPv4-mapped prefix is the IPv4 one; an invalid prefix is not added, and Validate
// refuses it with R4C-REG-010 (it was skipped without a word).
func TestFinder_TrustIsCanonicalAndRefusesInvalidPrefixes(t *testing.T) {
	bad := clientip.New()
	bad.Trust(netip.Prefix{})
	assert.False(t, bad.Trusting())
	err := bad.Validate("test")
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "test.trustedProxies")

	f := finder(t, func(f *clientip.Finder) { f.Trust(netip.MustParsePrefix("::ffff:10.0.0.0/104")) })
	assert.True(t, f.Trusting())
	assert.Equal(t, "203.0.113.5", f.KeyOf("10.1.1.1:5000", []string{"203.0.113.5"}), "mapped prefix is 10.0.0.0/8")
	assert.Equal(t, "203.0.113.5", f.KeyOf("[::ffff:10.1.1.1]:5000", []string{"203.0.113.5"}), "mapped peer")
	assert.Equal(t, "192.0.2.1", f.KeyOf("192.0.2.1:5000", []string{"203.0.113.5"}), "outside the prefix")

	f = finder(t, func(f *clientip.Finder) { f.Trust(netip.MustParsePrefix("10.1.2.3/16")) })
	assert.Equal(t, "203.0.113.5", f.KeyOf("10.1.200.1:5000", []string{"203.0.113.5"}), "host bits masked")
	assert.Equal(t, "10.2.0.1", f.KeyOf("10.2.0.1:5000", []string{"203.0.113.5"}))

	f = finder(t, func(f *clientip.Finder) { f.Trust(netip.MustParsePrefix("fe80::/10")) })
	assert.Equal(t, "203.0.113.5", f.Key(netip.MustParseAddr("fe80::1%eth0"), []string{"203.0.113.5"}),
		"a zoned peer is trusted")
}

// SetForwarded selects RFC 7239 for "forwarded" in any case, and a comma-separated list
// for any other name and for ""; the last call wins.
func TestFinder_SetForwardedSelectsTheSyntax(t *testing.T) {
	rfc := []string{`for=198.51.100.1;proto=https`}
	list := []string{"203.0.113.5"}
	for _, tc := range []struct {
		names                []string
		wantRFC7239, wantXFF string
	}{
		{nil, "10.1.1.1", "203.0.113.5"},
		{[]string{"forwarded"}, "198.51.100.1", "10.1.1.1"},
		{[]string{"Forwarded"}, "198.51.100.1", "10.1.1.1"},
		{[]string{"FORWARDED"}, "198.51.100.1", "10.1.1.1"},
		{[]string{"X-Forwarded-For"}, "10.1.1.1", "203.0.113.5"},
		{[]string{"x-forwarded-for"}, "10.1.1.1", "203.0.113.5"},
		{[]string{"X-Real-Client"}, "10.1.1.1", "203.0.113.5"},
		{[]string{"forwarded-for"}, "10.1.1.1", "203.0.113.5"},
		{[]string{""}, "10.1.1.1", "203.0.113.5"},
		{[]string{"forwarded", ""}, "10.1.1.1", "203.0.113.5"},
		{[]string{"x-forwarded-for", "forwarded"}, "198.51.100.1", "10.1.1.1"},
	} {
		t.Run(strconv.Quote(strings.Join(tc.names, ",")), func(t *testing.T) {
			f := finder(t, func(f *clientip.Finder) {
				trusting(f)
				for _, n := range tc.names {
					f.SetForwarded(n)
				}
			})
			assert.Equal(t, tc.wantRFC7239, f.KeyOf("10.1.1.1:5000", rfc), "a Forwarded element")
			assert.Equal(t, tc.wantXFF, f.KeyOf("10.1.1.1:5000", list), "a bare address")
		})
	}
}

// R4C-ATR-007: a prefix length out of range is a *policy.ConfigError keyed by the
// caller's prefix; the bounds themselves are valid.
func TestFinder_ValidateRefusesPrefixLengthsOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(f *clientip.Finder)
		key     string
		value   string
		message string
	}{
		{"IPv4 0", func(f *clientip.Finder) { f.SetIPv4Prefix(0) }, "svc.ipv4Prefix", "0", "an IPv4 prefix is 1 to 32 bits (default 32)"},
		{"IPv4 33", func(f *clientip.Finder) { f.SetIPv4Prefix(33) }, "svc.ipv4Prefix", "33", "an IPv4 prefix is 1 to 32 bits (default 32)"},
		{"IPv4 -1", func(f *clientip.Finder) { f.SetIPv4Prefix(-1) }, "svc.ipv4Prefix", "-1", "an IPv4 prefix is 1 to 32 bits (default 32)"},
		{"IPv6 0", func(f *clientip.Finder) { f.SetIPv6Prefix(0) }, "svc.ipv6Prefix", "0", "an IPv6 prefix is 1 to 128 bits (default 64)"},
		{"IPv6 129", func(f *clientip.Finder) { f.SetIPv6Prefix(129) }, "svc.ipv6Prefix", "129", "an IPv6 prefix is 1 to 128 bits (default 64)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := clientip.New()
			tc.set(&f)
			err := f.Validate("svc")
			var ce *policy.ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, r4c.OutOfRange, ce.Code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Equal(t, tc.value, ce.Value)
			assert.Equal(t, tc.message, ce.Reason)
		})
	}
	for _, bits := range []int{1, 32} {
		f := clientip.New()
		f.SetIPv4Prefix(bits)
		assert.NoError(t, f.Validate("svc"), "IPv4 %d", bits)
	}
	for _, bits := range []int{1, 128} {
		f := clientip.New()
		f.SetIPv6Prefix(bits)
		assert.NoError(t, f.Validate("svc"), "IPv6 %d", bits)
	}
	var zero clientip.Finder
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(zero.Validate("svc")), "the zero Finder is refused")
}

// KeyOf walks the forwarded values from the nearest hop over the trusted proxies, and
// keys the client by its network in canonical form.
func TestFinder_KeyOf(t *testing.T) {
	for _, tc := range []struct {
		name, remote, field string
		values              []string
		want                string
	}{
		{"no values", "10.1.1.1:5000", "", nil, "10.1.1.1"},
		{"empty values", "10.1.1.1:5000", "", []string{"", " , "}, "10.1.1.1"},
		{"untrusted peer: values ignored", "192.0.2.1:5000", "", []string{"203.0.113.5"}, "192.0.2.1"},
		{"one proxy", "10.1.1.1:5000", "", []string{"203.0.113.5"}, "203.0.113.5"},
		{"spoofed entries on the left", "10.1.1.1:5000", "", []string{"1.2.3.4, 203.0.113.5"}, "203.0.113.5"},
		{"two proxies", "10.1.1.1:5000", "", []string{"203.0.113.5, 10.2.2.2"}, "203.0.113.5"},
		{"all trusted: the farthest", "10.1.1.1:5000", "", []string{"10.3.3.3, 10.2.2.2"}, "10.3.3.3"},
		{"garbage ends the walk", "10.1.1.1:5000", "", []string{"203.0.113.5, garbage, 10.2.2.2"}, "10.2.2.2"},
		{"port dropped", "10.1.1.1:5000", "", []string{"203.0.113.5:4711"}, "203.0.113.5"},
		{"brackets dropped", "10.1.1.1:5000", "", []string{"[2001:db8::7]"}, "2001:db8::/64"},
		{"several values, last nearest", "10.1.1.1:5000", "", []string{"203.0.113.5", "10.2.2.2"}, "203.0.113.5"},
		{"several values, client in the last", "10.1.1.1:5000", "", []string{"198.51.100.1", "203.0.113.5"}, "203.0.113.5"},
		{"IPv6 peer, IPv6 client: its /64", "[2001:db8:ffff::1]:5000", "", []string{"2001:db8::7"}, "2001:db8::/64"},
		{"mapped IPv4 peer", "[::ffff:10.1.1.1]:5000", "", []string{"203.0.113.5"}, "203.0.113.5"},
		{"mapped IPv4 client", "10.1.1.1:5000", "", []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
		{"mapped IPv4 client with port", "10.1.1.1:5000", "", []string{"[::ffff:203.0.113.5]:443"}, "203.0.113.5"},
		{"mapped IPv4 peer, untrusted", "[::ffff:192.0.2.1]:5000", "", []string{"203.0.113.5"}, "192.0.2.1"},
		{"zoned peer", "[fe80::1%eth0]:5000", "", nil, "fe80::/64"},
		{"zoned client", "10.1.1.1:5000", "", []string{"[2001:db8:1:2::7%x]:80"}, "2001:db8:1:2::/64"},
		{"peer without port", "192.0.2.1", "", nil, "192.0.2.1"},
		{"not an address: as written", "pipe", "", []string{"203.0.113.5"}, "pipe"},
		{"not an address, with port: its host", "localhost:5000", "", nil, "localhost"},
		{"empty", "", "", nil, ""},
		{"Forwarded", "10.1.1.1:5000", "Forwarded", []string{`for=198.51.100.1, for="[2001:db8:5:6:7::17]:4711";proto=https`}, "2001:db8:5:6::/64"},
		{"Forwarded unknown", "10.1.1.1:5000", "Forwarded", []string{`for=unknown`}, "10.1.1.1"},
		{"Forwarded without for", "10.1.1.1:5000", "Forwarded", []string{`proto=https;by=10.9.9.9`}, "10.1.1.1"},
		{"Forwarded, case and quotes", "10.1.1.1:5000", "Forwarded", []string{`For="198.51.100.1"`}, "198.51.100.1"},
		{"Forwarded, for after other pairs", "10.1.1.1:5000", "forwarded", []string{`proto=https; for=198.51.100.1`}, "198.51.100.1"},
		{"Forwarded, over a trusted hop", "10.1.1.1:5000", "Forwarded", []string{`for=198.51.100.1`, `for=10.2.2.2;by=10.1.1.1`}, "198.51.100.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := finder(t, func(f *clientip.Finder) {
				trusting(f)
				f.SetForwarded(tc.field)
			})
			assert.Equal(t, tc.want, f.KeyOf(tc.remote, tc.values))
		})
	}
}

// The prefix lengths set the network a key stands for; a full-length prefix keys the
// address itself.
func TestFinder_PrefixLengths(t *testing.T) {
	for _, tc := range []struct {
		v4, v6       int
		addr, want   string
		forwardedVia string // the trusted peer the address is forwarded by; "" for the peer itself
	}{
		{32, 64, "192.0.2.77", "192.0.2.77", ""},
		{24, 64, "192.0.2.77", "192.0.2.0/24", ""},
		{16, 64, "192.0.2.77", "192.0.0.0/16", ""},
		{1, 64, "192.0.2.77", "128.0.0.0/1", ""},
		{32, 128, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6", ""},
		{32, 56, "2001:db8:1:2:3:4:5:6", "2001:db8:1::/56", ""},
		{32, 48, "2001:db8:1:2:3:4:5:6", "2001:db8:1::/48", ""},
		{32, 1, "2001:db8:1:2:3:4:5:6", "::/1", ""},
		{24, 64, "192.0.2.77", "192.0.2.0/24", "10.1.1.1:5000"},
		{32, 128, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6", "10.1.1.1:5000"},
	} {
		t.Run(tc.addr+"/"+strconv.Itoa(tc.v4)+"/"+strconv.Itoa(tc.v6), func(t *testing.T) {
			f := finder(t, func(f *clientip.Finder) {
				trusting(f)
				f.SetIPv4Prefix(tc.v4)
				f.SetIPv6Prefix(tc.v6)
			})
			a := netip.MustParseAddr(tc.addr)
			if tc.forwardedVia != "" {
				assert.Equal(t, tc.want, f.KeyOf(tc.forwardedVia, []string{tc.addr}))
				return
			}
			assert.Equal(t, tc.want, f.KeyOf(netip.AddrPortFrom(a, 5000).String(), nil))
			assert.Equal(t, tc.want, f.Key(a, nil))
			assert.Equal(t, tc.want, f.Key(a, nil), "from the cache")
		})
	}
}

// Key makes the peer canonical (IPv4-mapped is IPv4, no zone) and reads the forwarded
// values as KeyOf does; the zero Addr is keyed "".
func TestFinder_Key(t *testing.T) {
	f := finder(t, func(f *clientip.Finder) {
		trusting(f)
		f.SetIPv6Prefix(128)
	})
	for _, tc := range []struct {
		name, peer string
		values     []string
		want       string
	}{
		{"IPv4", "192.0.2.1", nil, "192.0.2.1"},
		{"IPv4-mapped", "::ffff:192.0.2.1", nil, "192.0.2.1"},
		{"zone dropped", "fe80::1%eth0", nil, "fe80::1"},
		{"canonical IPv6 text", "2001:DB8:0:0::1", nil, "2001:db8::1"},
		{"untrusted peer: values ignored", "192.0.2.1", []string{"203.0.113.5"}, "192.0.2.1"},
		{"trusted peer", "10.1.1.1", []string{"203.0.113.5"}, "203.0.113.5"},
		{"trusted mapped peer", "::ffff:10.1.1.1", []string{"1.2.3.4, 203.0.113.5, 10.2.2.2"}, "203.0.113.5"},
		{"trusted IPv6 peer, mapped client", "2001:db8:ffff::1", []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
		{"garbage ends the walk at the peer", "10.1.1.1", []string{"garbage"}, "10.1.1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, f.Key(netip.MustParseAddr(tc.peer), tc.values))
			assert.Equal(t, tc.want, f.Key(netip.MustParseAddr(tc.peer), tc.values), "again, from the cache")
		})
	}
	assert.Equal(t, "", f.Key(netip.Addr{}, []string{"203.0.113.5"}), "the zero Addr")
}

// Key and KeyOf give one client one key, whichever way its address comes in.
func TestFinder_KeyAndKeyOfAgree(t *testing.T) {
	f := finder(t, nil)
	for i := range 2000 {
		var a netip.Addr
		switch i % 3 {
		case 0:
			a = netip.AddrFrom4([4]byte{byte(i >> 8), byte(i), 7, byte(i * 31)})
		case 1:
			a = netip.AddrFrom16(netip.AddrFrom4([4]byte{byte(i >> 8), byte(i), 9, 1}).As16()) // mapped
		default:
			b := netip.MustParseAddr("2001:db8::").As16()
			b[6], b[7], b[15] = byte(i>>8), byte(i), byte(i*17)
			a = netip.AddrFrom16(b)
		}
		want := f.KeyOf(netip.AddrPortFrom(a, 443).String(), nil)
		require.Equal(t, want, f.Key(a, nil), "%s", a)
	}
}

// Keys are cached by network in a fixed number of slots: many networks that share slots
// still get their own keys, IPv4 and IPv6 alike.
func TestFinder_ManyNetworksKeepTheirOwnKeys(t *testing.T) {
	f := finder(t, func(f *clientip.Finder) { f.SetIPv4Prefix(24) })
	for round := range 3 {
		for i := range 5000 {
			b := netip.MustParseAddr("2001:db8::").As16()
			b[4], b[5], b[15] = byte(i>>8), byte(i), byte(round+1)
			a := netip.AddrFrom16(b)
			b[15] = 0
			require.Equal(t, netip.PrefixFrom(netip.AddrFrom16(b), 64).String(), f.Key(a, nil))

			v4 := netip.AddrFrom4([4]byte{198, byte(i >> 8), byte(i), byte(round + 1)})
			require.Equal(t, netip.PrefixFrom(v4, 24).Masked().String(), f.Key(v4, nil))
		}
	}
}

// The cache is safe for concurrent use: goroutines keying many networks that share slots
// always get their own keys (run with -race).
func TestFinder_ConcurrentKeysAreRight(t *testing.T) {
	f := finder(t, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				b := netip.MustParseAddr("2001:db8::").As16()
				b[4], b[5], b[15] = byte(i>>8), byte(i), byte(g+1)
				a := netip.AddrFrom16(b)
				b[15] = 0
				if got, want := f.Key(a, nil), netip.PrefixFrom(netip.AddrFrom16(b), 64).String(); got != want {
					t.Errorf("%s: got %s, want %s", a, got, want)
					return
				}
				v4 := netip.AddrFrom4([4]byte{203, byte(i >> 8), byte(i), byte(g + 1)})
				if got := f.Key(v4, nil); got != v4.String() {
					t.Errorf("%s: got %s", v4, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// The key of an IPv4 client at /32 is cut from the text it came in, so even a new client
// costs no allocation.
func TestFinder_KeyOfIPv4CutFromTheTextAllocatesNothing(t *testing.T) {
	f := finder(t, trusting)
	remotes := make([]string, 1000)
	for i := range remotes {
		remotes[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, byte(i >> 8), byte(i)}), 5000).String()
	}
	i := 0
	assert.Zero(t, testing.AllocsPerRun(999, func() {
		_ = f.KeyOf(remotes[i], nil)
		i++
	}), "peer")
	fwd := []string{"203.0.113.9"}
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = f.KeyOf("10.0.0.1:5000", fwd) }), "forwarded")
	assert.Equal(t, "203.0.113.9", f.KeyOf("10.0.0.1:5000", fwd))
}

// A returning client costs no allocation: its key is cached, whether it comes as text
// (KeyOf) or as a netip.Addr (Key), from the peer or forwarded.
func TestFinder_ReturningClientAllocatesNothing(t *testing.T) {
	f := finder(t, trusting)
	for _, tc := range []struct {
		name   string
		remote string
		values []string
	}{
		{"IPv6 peer", "[2001:db8:1:2:3:4:5:6]:51234", nil},
		{"IPv4-mapped peer", "[::ffff:203.0.113.7]:51234", nil},
		{"IPv6 forwarded", "10.0.0.1:51234", []string{"2001:db8:1:2::9"}},
		{"IPv4 forwarded over two proxies", "10.0.0.1:51234", []string{"203.0.113.9, 10.0.0.2"}},
		{"Forwarded-style value read as a list", "10.0.0.1:51234", []string{"for=203.0.113.9"}},
	} {
		t.Run("KeyOf "+tc.name, func(t *testing.T) {
			f.KeyOf(tc.remote, tc.values)
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = f.KeyOf(tc.remote, tc.values) }))
		})
	}
	for _, tc := range []struct {
		name   string
		peer   netip.Addr
		values []string
	}{
		{"IPv4", netip.MustParseAddr("192.0.2.1"), nil},
		{"IPv4-mapped", netip.MustParseAddr("::ffff:192.0.2.1"), nil},
		{"IPv6", netip.MustParseAddr("2001:db8:1:2:3:4:5:6"), nil},
		{"IPv6 with zone", netip.MustParseAddr("fe80::1%eth0"), nil},
		{"IPv4 forwarded", netip.MustParseAddr("10.0.0.1"), []string{"203.0.113.9"}},
		{"IPv6 forwarded", netip.MustParseAddr("10.0.0.1"), []string{"2001:db8:1:2::9"}},
	} {
		t.Run("Key "+tc.name, func(t *testing.T) {
			f.Key(tc.peer, tc.values)
			assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = f.Key(tc.peer, tc.values) }))
		})
	}
}

// RFC 7239 values are parsed without allocating too.
func TestFinder_ReturningClientThroughForwardedAllocatesNothing(t *testing.T) {
	f := finder(t, func(f *clientip.Finder) {
		trusting(f)
		f.SetForwarded("Forwarded")
	})
	values := []string{`for="[2001:db8:5:6:7::17]:4711";proto=https, for=10.2.2.2`}
	peer := netip.MustParseAddr("10.0.0.1")
	assert.Equal(t, "2001:db8:5:6::/64", f.Key(peer, values))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = f.Key(peer, values) }))
	v4 := []string{`for=198.51.100.1`}
	assert.Equal(t, "198.51.100.1", f.KeyOf("10.0.0.1:5000", v4))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = f.KeyOf("10.0.0.1:5000", v4) }))
}

func BenchmarkKeyOf(b *testing.B) {
	for _, bc := range []struct {
		name   string
		remote string
		values []string
	}{
		{"IPv4", "192.0.2.1:51234", nil},
		{"IPv6", "[2001:db8:1:2:3:4:5:6]:51234", nil},
		{"XForwardedFor", "10.0.0.1:51234", []string{"198.51.100.1, 203.0.113.9, 10.0.0.2"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := finder(b, trusting)
			b.ReportAllocs()
			for b.Loop() {
				_ = f.KeyOf(bc.remote, bc.values)
			}
		})
	}
}

func BenchmarkKey(b *testing.B) {
	for _, bc := range []struct {
		name   string
		peer   netip.Addr
		values []string
	}{
		{"IPv4", netip.MustParseAddr("192.0.2.1"), nil},
		{"IPv6", netip.MustParseAddr("2001:db8:1:2:3:4:5:6"), nil},
		{"XForwardedFor", netip.MustParseAddr("10.0.0.1"), []string{"198.51.100.1, 203.0.113.9, 10.0.0.2"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := finder(b, trusting)
			b.ReportAllocs()
			for b.Loop() {
				_ = f.Key(bc.peer, bc.values)
			}
		})
	}
}
