package clientip

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// parseHopByTrying is the plain definition of parseHop: whatever netip parses as an
// address, as an address with a port, or as an address in brackets.
func parseHopByTrying(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

var hops = []string{
	"", "192.0.2.1", "192.0.2.1:4711", "[192.0.2.1]", "[192.0.2.1]:80", "2001:db8::1",
	"[2001:db8::1]", "[2001:db8::1]:4711", "2001:DB8::1", "::1", "::", "[::]:0", "::ffff:10.1.2.3",
	"[::ffff:10.1.2.3]:443", "fe80::1%eth0", "[fe80::1%eth0]:80", "[fe80::1%eth0]", "unknown",
	"_hidden", "garbage", "deadbeef", "1:2", "1.2.3.4:5:6", "192.0.2.1:", "192.0.2.1:99999",
	"192.0.2", "192.0.2.01", "[", "[]", "[:]", "]", "::ffff:1.2.3.4%x", "1.2.3.4%x",
	"[2001:db8::1]x", "2001:db8::1:80", ":80", "0", "for=192.0.2.1", " 192.0.2.1",
}

// parseHop, which tries only the form a hop can have, accepts what netip accepts and
// gives the same canonical address.
func TestParseHop_AcceptsWhatNetipAccepts(t *testing.T) {
	for _, s := range hops {
		want, wantOK := parseHopByTrying(s)
		got, text, ok := parseHop(s)
		assert.Equal(t, wantOK, ok, "%q", s)
		assert.Equal(t, want, got, "%q", s)
		if text != "" {
			assert.True(t, got.Is4() && got.String() == s, "%q: text %q is not its canonical text", s, text)
		}
	}
}

// Hops that cannot be addresses ("unknown", obfuscated identifiers, a Forwarded element
// read as a list) are refused without an allocation.
func TestParseHop_RefusesNonAddressesWithoutAllocating(t *testing.T) {
	for _, s := range []string{"", "unknown", "_hidden", "for=192.0.2.1", "garbage", "proto=https", "deadbeef:80"} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { parseHop(s) }), "%q", s)
	}
}

func FuzzParseHop(f *testing.F) {
	for _, s := range hops {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantOK := parseHopByTrying(s)
		got, _, ok := parseHop(s)
		if ok != wantOK || got != want {
			t.Errorf("parseHop(%q) = %v, %v; want %v, %v", s, got, ok, want, wantOK)
		}
	})
}
