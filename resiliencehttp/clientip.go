package resiliencehttp

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/policy"
)

const (
	headerXFF       = "X-Forwarded-For"
	headerForwarded = "Forwarded"

	defaultIPv4Prefix = 32
	defaultIPv6Prefix = 64
)

// IPv6Prefix keys IPv6 clients by their network: the first bits bits of the address, so
// that every address of one network shares one quota and one key. Default 64: one key
// per /64, the smallest network an IPv6 end site is given (RFC 6177), whose addresses a
// single host can rotate through at will; so a client cannot multiply its quota, or fill
// the limiter's keys, by changing addresses within it. 128 keys each address on its own;
// a shorter prefix (56, 48) groups whole sites. bits outside 1..128 is R4C-ATR-007. It
// applies to the default key (the client IP, with or without TrustedProxies) and to
// ClientIP; with KeyFunc it is not used.
//
// Addresses that embed an IPv4 address in their low bits, as NAT64's 64:ff9b::/96 does,
// put every client behind that translator in one /64: if such clients reach the service
// directly, key them with a KeyFunc that extracts the IPv4 address.
func IPv6Prefix(bits int) MiddlewareOption {
	return func(m *middleware) { m.ips.v6bits = bits }
}

// IPv4Prefix keys IPv4 clients by their network: the first bits bits of the address.
// Default 32: one key per address. bits outside 1..32 is R4C-ATR-007. It applies as
// IPv6Prefix does.
func IPv4Prefix(bits int) MiddlewareOption {
	return func(m *middleware) { m.ips.v4bits = bits }
}

// ClientIP returns the key function that Middleware uses by default, configured by the
// same options: the client of a request, as the address of its connection (RemoteAddr),
// or as read from the forwarding header (ForwardedHeader) when the connection comes from
// one of the TrustedProxies; then keyed by its network, IPv4Prefix and IPv6Prefix. Use it
// to build a KeyFunc that falls back on the client, e.g. for requests without an API key.
// Options other than TrustedProxies, ForwardedHeader, IPv4Prefix and IPv6Prefix are
// ignored. It returns a *policy.ConfigError, R4C-ATR-007, for a prefix length out of
// range.
//
// Addresses are made canonical first, so that one client has one key however it is
// written: an IPv4-mapped IPv6 address (::ffff:192.0.2.1) is the IPv4 address, the zone
// of an IPv6 address (fe80::1%eth0) is dropped, and IPv6 is written in its canonical form
// (RFC 5952). The key is then the address itself for a full-length prefix ("192.0.2.1",
// the default for IPv4), and the network in CIDR notation otherwise ("2001:db8:1:2::/64",
// the default for IPv6); an address forwarded with a port loses the port. A RemoteAddr
// that is not an IP address (a Unix socket's) is the key as written.
//
// The key of an IPv4 address at /32 is cut from the request, and the keys of other
// clients are cached (in 1,024 slots, by network), so a returning client costs no
// allocation. The function is safe for concurrent use.
func ClientIP(opts ...MiddlewareOption) (func(r *http.Request) string, error) {
	m := configure(opts)
	if err := m.ips.validate(); err != nil {
		return nil, err
	}
	return m.ips.of, nil
}

// clientIPs finds the client of requests and keys it by network.
type clientIPs struct {
	trusted []netip.Prefix // canonical (IPv4 as IPv4) and masked
	header  string         // canonical
	v4bits  int
	v6bits  int
	cache   *keyCache
}

func newClientIPs() clientIPs {
	return clientIPs{header: headerXFF, v4bits: defaultIPv4Prefix, v6bits: defaultIPv6Prefix}
}

// validate checks the prefix lengths and makes the key cache.
func (c *clientIPs) validate() error {
	if c.v4bits < 1 || c.v4bits > 32 {
		return policy.Errorf(policy.CodeOutOfRange, "resiliencehttp.ipv4Prefix", strconv.Itoa(c.v4bits),
			"an IPv4 prefix is 1 to 32 bits (default %d)", defaultIPv4Prefix)
	}
	if c.v6bits < 1 || c.v6bits > 128 {
		return policy.Errorf(policy.CodeOutOfRange, "resiliencehttp.ipv6Prefix", strconv.Itoa(c.v6bits),
			"an IPv6 prefix is 1 to 128 bits (default %d)", defaultIPv6Prefix)
	}
	if c.header == "" {
		c.header = headerXFF
	}
	c.cache = &keyCache{seed: rand.Uint64()}
	return nil
}

// trust adds p to the trusted proxies, canonical: an IPv4-mapped prefix
// (::ffff:10.0.0.0/104) becomes the IPv4 prefix (10.0.0.0/8), as the addresses it is
// matched against are. An invalid p is skipped.
func (c *clientIPs) trust(p netip.Prefix) {
	if !p.IsValid() {
		return
	}
	a, bits := p.Addr().WithZone(""), p.Bits()
	if a.Is4In6() && bits >= 96 {
		a, bits = a.Unmap(), bits-96
	}
	c.trusted = append(c.trusted, netip.PrefixFrom(a, bits).Masked())
}

func (c *clientIPs) of(r *http.Request) string {
	host := remoteHost(r.RemoteAddr)
	peer, text, ok := parseAddr(host)
	if !ok {
		return host
	}
	if len(c.trusted) > 0 && c.isTrusted(peer) {
		if values := r.Header[c.header]; len(values) > 0 {
			if c.header == headerForwarded {
				peer, text = c.walk(values, peer, text, forwardedFor)
			} else {
				peer, text = c.walk(values, peer, text, func(entry string) string { return entry })
			}
		}
	}
	return c.key(peer, text)
}

// walk goes through the comma-separated hops of values from the nearest (the last) to the
// farthest, over trusted proxies, and returns the first address that is not one, with its
// text as parseHop gives it. near is the nearest hop known so far (the connection's peer).
// An entry that is not an address ends the walk at near; when every hop is trusted, the
// farthest is the client.
func (c *clientIPs) walk(values []string, near netip.Addr, nearText string, addrOf func(entry string) string) (netip.Addr, string) {
	for i := len(values) - 1; i >= 0; i-- {
		line := values[i]
		for line != "" {
			var entry string
			if j := strings.LastIndexByte(line, ','); j >= 0 {
				entry, line = line[j+1:], line[:j]
			} else {
				entry, line = line, ""
			}
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			addr, text, ok := parseHop(addrOf(entry))
			if !ok {
				return near, nearText
			}
			if !c.isTrusted(addr) {
				return addr, text
			}
			near, nearText = addr, text
		}
	}
	return near, nearText
}

// isTrusted reports whether a, canonical, is the address of a trusted proxy.
func (c *clientIPs) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// key returns the limiter key of a, canonical: the address for a full-length prefix, else
// its network in CIDR notation. text is a as written when that is already its canonical
// text (a plain IPv4 address), which is then the key without an allocation; "" otherwise.
func (c *clientIPs) key(a netip.Addr, text string) string {
	bits := c.v6bits
	if a.Is4() {
		bits = c.v4bits
		if bits == 32 && text != "" {
			return text
		}
	}
	p, err := a.Prefix(bits)
	if err != nil { // cannot happen: a is valid and bits in range
		return a.String()
	}
	n := p.Addr()
	slot := c.cache.slot(n)
	if e := slot.Load(); e != nil && e.net == n {
		return e.key
	}
	k := p.String()
	if bits == a.BitLen() {
		k = n.String()
	}
	slot.Store(&cachedKey{net: n, key: k})
	return k
}

// keyCache holds the keys of recent clients' networks, so that building a returning
// client's key costs no allocation: direct-mapped, a fixed number of slots, without locks;
// a network that maps to a taken slot replaces its entry. Entries are never modified.
type keyCache struct {
	seed  uint64
	slots [keyCacheSlots]atomic.Pointer[cachedKey]
}

const keyCacheBits = 10
const keyCacheSlots = 1 << keyCacheBits // 8 KiB of pointers

type cachedKey struct {
	net netip.Addr // the masked address
	key string
}

func (kc *keyCache) slot(n netip.Addr) *atomic.Pointer[cachedKey] {
	b := n.As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	h := (hi ^ (lo * 0x9e3779b97f4a7c15) ^ kc.seed) * 0xbf58476d1ce4e5b9
	return &kc.slots[h>>(64-keyCacheBits)]
}

// parseAddr parses an IP address and returns it canonical (IPv4-mapped IPv6 as IPv4,
// without zone), with s when s is already its canonical full-length text (a plain IPv4
// address: netip refuses IPv4 with leading zeros), "" otherwise.
func parseAddr(s string) (netip.Addr, string, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, "", false
	}
	if a.Is4() {
		return a, s, true
	}
	return a.Unmap().WithZone(""), "", true
}

// parseHop parses one forwarded hop: an address, possibly with a port ("192.0.2.1:4711",
// "[2001:db8::1]:4711") or in brackets, and returns it as parseAddr does.
func parseHop(s string) (netip.Addr, string, bool) {
	if a, text, ok := parseAddr(s); ok {
		return a, text, true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), "", true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, _, ok := parseAddr(s[1 : len(s)-1]); ok {
			return a, "", true
		}
	}
	return netip.Addr{}, "", false
}

// forwardedFor returns the for= value of one element of an RFC 7239 Forwarded field
// ("for=192.0.2.60;proto=http;by=203.0.113.43"), unquoted; "" when it has none.
func forwardedFor(element string) string {
	for element != "" {
		var pair string
		if j := strings.IndexByte(element, ';'); j >= 0 {
			pair, element = element[:j], element[j+1:]
		} else {
			pair, element = element, ""
		}
		pair = strings.TrimSpace(pair)
		if len(pair) > 4 && strings.EqualFold(pair[:4], "for=") {
			v := pair[4:]
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			return v
		}
	}
	return ""
}

// remoteHost returns the host part of a RemoteAddr ("192.0.2.1:1234", "[::1]:1234"), or
// addr itself when it has no port.
func remoteHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
