// Package clientip finds the client of a call and keys it by network, for the per-client
// rate limits of resiliencehttp and resiliencegrpc: the peer of the connection, or, when
// the peer is a trusted proxy, the client its forwarding field names (X-Forwarded-For, or
// the for= parameters of RFC 7239 Forwarded), walked from the nearest hop outwards; then
// made canonical and keyed by its IPv4 or IPv6 network.
//
// The key of a returning client costs no allocation: the key of an IPv4 address at /32 is
// cut from the text it was read from when there is one, and the keys of other networks
// are kept in a fixed-size, lock-free cache.
package clientip

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// The default prefix lengths: one key per IPv4 address, one per IPv6 /64.
const (
	defaultIPv4Prefix = 32
	defaultIPv6Prefix = 64
)

// Finder finds the client of a call and keys it by network. Set it up with the setters,
// then call Validate once; after that Key and KeyOf are safe for concurrent use, and the
// setters must no longer be called. The zero value is not usable: use New.
type Finder struct {
	trusted []netip.Prefix // canonical (IPv4 as IPv4) and masked
	invalid bool           // Trust was given an invalid prefix: Validate refuses it
	rfc7239 bool           // the forwarded values are RFC 7239 Forwarded elements
	v4bits  int
	v6bits  int
	cache   *keyCache
}

// New returns a Finder with the defaults: no trusted proxy, forwarded values read as
// comma-separated lists of addresses (X-Forwarded-For), IPv4 prefix 32, IPv6 prefix 64.
func New() Finder {
	return Finder{v4bits: defaultIPv4Prefix, v6bits: defaultIPv6Prefix}
}

// Trust adds p to the trusted proxies, canonical: an IPv4-mapped prefix
// (::ffff:10.0.0.0/104) becomes the IPv4 prefix (10.0.0.0/8), the zone is dropped and the
// prefix masked, as the addresses it is matched against are canonical. An invalid p is
// not added, and makes Validate fail.
func (f *Finder) Trust(p netip.Prefix) {
	if !p.IsValid() {
		f.invalid = true
		return
	}
	a, bits := p.Addr().WithZone(""), p.Bits()
	if a.Is4In6() && bits >= 96 {
		a, bits = a.Unmap(), bits-96
	}
	f.trusted = append(f.trusted, netip.PrefixFrom(a, bits).Masked())
}

// SetForwarded names the field the trusted proxies write, which sets how its values are
// read: a name equal to "forwarded" under case folding selects RFC 7239 (the for=
// parameter of each element); any other name, and "" (the default), a comma-separated
// list of addresses, as X-Forwarded-For. The last call wins.
func (f *Finder) SetForwarded(name string) {
	f.rfc7239 = strings.EqualFold(name, "forwarded")
}

// SetIPv4Prefix keys IPv4 clients by their first bits bits. Default 32; Validate refuses
// bits outside 1..32.
func (f *Finder) SetIPv4Prefix(bits int) { f.v4bits = bits }

// SetIPv6Prefix keys IPv6 clients by their first bits bits. Default 64; Validate refuses
// bits outside 1..128.
func (f *Finder) SetIPv6Prefix(bits int) { f.v6bits = bits }

// Validate checks the prefix lengths and the trusted proxies and makes the key cache; it
// must be called once, after the setters and before Key or KeyOf. It returns a
// *policy.ConfigError: R4C-ATR-007, keyed keyPrefix+".ipv4Prefix" or
// keyPrefix+".ipv6Prefix", for a prefix length out of range; R4C-REG-010, keyed
// keyPrefix+".trustedProxies", when Trust was given an invalid prefix.
func (f *Finder) Validate(keyPrefix string) error {
	if f.invalid {
		return r4c.Errorf(r4c.BadSpec, keyPrefix+".trustedProxies", "",
			"a trusted proxy is an invalid netip.Prefix (the zero Prefix, or the result of a failed ParsePrefix): no proxy would be trusted for it")
	}
	if f.v4bits < 1 || f.v4bits > 32 {
		return r4c.Errorf(r4c.OutOfRange, keyPrefix+".ipv4Prefix", strconv.Itoa(f.v4bits),
			"an IPv4 prefix is 1 to 32 bits (default %d)", defaultIPv4Prefix)
	}
	if f.v6bits < 1 || f.v6bits > 128 {
		return r4c.Errorf(r4c.OutOfRange, keyPrefix+".ipv6Prefix", strconv.Itoa(f.v6bits),
			"an IPv6 prefix is 1 to 128 bits (default %d)", defaultIPv6Prefix)
	}
	f.cache = &keyCache{seed: rand.Uint64()}
	return nil
}

// Trusting reports whether any proxy is trusted: if not, the forwarded values are never
// read, and callers need not look them up.
func (f *Finder) Trusting() bool { return len(f.trusted) > 0 }

// Trusted reports whether peer is one of the trusted proxies, whose forwarded values Key
// reads: callers read those values only then.
func (f *Finder) Trusted(peer netip.Addr) bool {
	return len(f.trusted) > 0 && peer.IsValid() && f.isTrusted(peer.Unmap().WithZone(""))
}

// KeyOf keys a call whose peer is remoteAddr, an address with a port ("192.0.2.1:1234",
// "[::1]:1234") or without, with forwarded, the values of the forwarding field, read
// only when the peer is a trusted proxy. A remoteAddr that is not an IP address (a Unix
// socket's) is keyed by its host part as written, and forwarded is not read. The key of
// an IPv4 client at /32 is cut from remoteAddr or forwarded; see Key for the rest.
func (f *Finder) KeyOf(remoteAddr string, forwarded []string) string {
	host := remoteHost(remoteAddr)
	if !mayBeIP(host) {
		return host
	}
	peer, text, ok := parseAddr(host)
	if !ok {
		return host
	}
	return f.key(peer, text, forwarded)
}

// Key keys a call from peer with forwarded, the values of the forwarding field: those
// are walked from the last (nearest) hop outwards over the trusted proxies, when peer is
// one, to the first address that is not one, the client; an entry that is not an address
// ("unknown") ends the walk at the hop that wrote it, and when every hop is trusted the
// farthest is the client. Addresses are made canonical first (IPv4-mapped IPv6 is IPv4,
// zones are dropped), and a forwarded address loses its port. The key is the address in
// its canonical text (RFC 5952 for IPv6) for a full-length prefix, else its network in
// CIDR notation ("2001:db8:1:2::/64"). The zero Addr, whose network is unknown, is keyed
// "". A returning client's key costs no allocation: it is cached by network.
func (f *Finder) Key(peer netip.Addr, forwarded []string) string {
	if !peer.IsValid() {
		return ""
	}
	return f.key(peer.Unmap().WithZone(""), "", forwarded)
}

// key keys peer, canonical, whose canonical text is text or unknown (""), with forwarded.
func (f *Finder) key(peer netip.Addr, text string, forwarded []string) string {
	if len(forwarded) > 0 && len(f.trusted) > 0 && f.isTrusted(peer) {
		peer, text = f.walk(forwarded, peer, text)
	}
	return f.keyOfAddr(peer, text)
}

// walk goes through the comma-separated hops of values from the nearest (the last) to the
// farthest, over trusted proxies, and returns the first address that is not one, with its
// text as parseHop gives it. near is the nearest hop known so far (the peer). An entry
// that is not an address ends the walk at near; when every hop is trusted, the farthest
// is the client.
func (f *Finder) walk(values []string, near netip.Addr, nearText string) (netip.Addr, string) {
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
			if f.rfc7239 {
				entry = forwardedFor(entry)
			}
			addr, text, ok := parseHop(entry)
			if !ok {
				return near, nearText
			}
			if !f.isTrusted(addr) {
				return addr, text
			}
			near, nearText = addr, text
		}
	}
	return near, nearText
}

// isTrusted reports whether a, canonical, is the address of a trusted proxy.
func (f *Finder) isTrusted(a netip.Addr) bool {
	for _, p := range f.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// keyOfAddr returns the key of a, canonical: the address for a full-length prefix, else
// its network in CIDR notation. text is a as written when that is already its canonical
// text (a plain IPv4 address), which is then the key without an allocation; "" otherwise.
func (f *Finder) keyOfAddr(a netip.Addr, text string) string {
	bits := f.v6bits
	if a.Is4() {
		bits = f.v4bits
		if bits == 32 && text != "" {
			return text
		}
	}
	p, err := a.Prefix(bits)
	if err != nil { // cannot happen once validated: a is valid and bits in range
		return a.String()
	}
	var slot *atomic.Pointer[cachedKey]
	if f.cache != nil {
		slot = f.cache.slot(p)
		if e := slot.Load(); e != nil && e.net == p {
			return e.key
		}
	}
	k := p.String()
	if bits == a.BitLen() {
		k = p.Addr().String()
	}
	if slot != nil {
		slot.Store(&cachedKey{net: p, key: k})
	}
	return k
}

// keyCache holds the keys of recent clients' networks, so that building a returning
// client's key costs no allocation: direct-mapped, a fixed number of slots, without locks;
// a network that maps to a taken slot replaces its entry. Entries are never modified.
type keyCache struct {
	seed  uint64
	slots [keyCacheSlots]atomic.Pointer[cachedKey]
}

const (
	keyCacheBits  = 10
	keyCacheSlots = 1 << keyCacheBits // 8 KiB of pointers
)

// cachedKey is the key of one network.
type cachedKey struct {
	net netip.Prefix // masked, so that equal networks compare equal
	key string
}

// slot returns the slot of network p.
func (kc *keyCache) slot(p netip.Prefix) *atomic.Pointer[cachedKey] {
	b := p.Addr().As16()
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
// "[2001:db8::1]:4711") or in brackets, and returns it as parseAddr does. It tries only
// the form s can have, and refuses without parsing what cannot be an address ("unknown",
// "_hidden", ""), so that most hops that are not addresses cost no allocation either.
func parseHop(s string) (netip.Addr, string, bool) {
	switch {
	case s == "":
		return netip.Addr{}, "", false
	case s[0] == '[':
		if s[len(s)-1] == ']' {
			a, _, ok := parseAddr(s[1 : len(s)-1])
			return a, "", ok
		}
		return parseAddrPort(s)
	}
	i := strings.IndexByte(s, ':')
	switch {
	case i < 0: // no colon: IPv4, as IPv6 has at least two
		if !ipv4Chars(s) {
			return netip.Addr{}, "", false
		}
		return parseAddr(s)
	case strings.IndexByte(s[i+1:], ':') < 0: // one colon: IPv4 with a port
		if !ipv4Chars(s[:i]) {
			return netip.Addr{}, "", false
		}
		return parseAddrPort(s)
	case isHex(s[0]) || s[0] == ':': // IPv6
		return parseAddr(s)
	}
	return netip.Addr{}, "", false
}

// ipv4Chars reports whether s has only the characters of an IPv4 address.
func ipv4Chars(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseAddrPort parses an address with a port and returns the address as parseAddr does.
func parseAddrPort(s string) (netip.Addr, string, bool) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.Addr{}, "", false
	}
	return ap.Addr().Unmap().WithZone(""), "", true
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

// remoteHost returns the host part of a remote address ("192.0.2.1:1234", "[::1]:1234"),
// or addr itself when it has no port.
func remoteHost(addr string) string {
	if strings.IndexByte(addr, ':') < 0 {
		return addr // no port: a Unix socket's path, an in-memory listener's name
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// mayBeIP reports whether s has the characters an IP address can have, so that text that
// cannot be one (a Unix socket's path) is not parsed, which would allocate an error.
func mayBeIP(s string) bool {
	switch {
	case s == "":
		return false
	case strings.IndexByte(s, ':') >= 0:
		return isHex(s[0]) || s[0] == ':'
	}
	return ipv4Chars(s)
}
