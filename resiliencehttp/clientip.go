package resiliencehttp

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

const (
	headerXFF       = "X-Forwarded-For"
	headerForwarded = "Forwarded"
)

// ClientIP returns the key function that Middleware uses by default: the IP address of
// the client that sent a request. It is the host of the request's RemoteAddr, unless
// that address belongs to one of trusted; the client is then read from header
// ("X-Forwarded-For", or "Forwarded" for RFC 7239), as TrustedProxies describes. With no
// trusted prefixes the header is never read. Use it to build a KeyFunc that falls back on
// the client IP, e.g. for requests without an API key.
//
// The key is the address as written (an IPv6 address is one key per address, not per
// /64 network); an address forwarded with a port loses the port. A key cut from the
// request costs no allocation.
func ClientIP(header string, trusted ...netip.Prefix) func(r *http.Request) string {
	c := clientIPs{header: http.CanonicalHeaderKey(header)}
	if c.header == "" {
		c.header = headerXFF
	}
	for _, p := range trusted {
		if p.IsValid() {
			c.trusted = append(c.trusted, p.Masked())
		}
	}
	return c.of
}

// clientIPs finds the client IP of requests.
type clientIPs struct {
	trusted []netip.Prefix
	header  string // canonical
}

func (c *clientIPs) of(r *http.Request) string {
	host := remoteHost(r.RemoteAddr)
	if len(c.trusted) == 0 {
		return host
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !c.isTrusted(peer) {
		return host
	}
	values := r.Header[c.header]
	if len(values) == 0 {
		return host
	}
	if c.header == headerForwarded {
		return c.walk(values, host, forwardedFor)
	}
	return c.walk(values, host, func(entry string) string { return entry })
}

// walk goes through the comma-separated hops of values from the nearest (the last) to the
// farthest, over trusted proxies, and returns the first address that is not one. near is
// the nearest hop known so far (the connection's peer). An entry that is not an address
// ends the walk at near; when every hop is trusted, the farthest is the client.
func (c *clientIPs) walk(values []string, near string, addrOf func(entry string) string) string {
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
			key, addr, ok := parseHop(addrOf(entry))
			if !ok {
				return near
			}
			if !c.isTrusted(addr) {
				return key
			}
			near = key
		}
	}
	return near
}

func (c *clientIPs) isTrusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHop parses one forwarded hop: an address, possibly with a port ("192.0.2.1:4711",
// "[2001:db8::1]:4711") or in brackets. It returns the key for it: the hop as written
// when it is a bare address, else the address alone.
func parseHop(s string) (key string, addr netip.Addr, ok bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return s, a, true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().String(), ap.Addr(), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.String(), a, true
		}
	}
	return "", netip.Addr{}, false
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
