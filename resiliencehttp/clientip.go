package resiliencehttp

import (
	"net/http"

	"github.com/resilience4go/resilience4go/internal/clientip"
)

const headerXFF = "X-Forwarded-For"

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
	return func(m *middleware) { m.ips.SetIPv6Prefix(bits) }
}

// IPv4Prefix keys IPv4 clients by their network: the first bits bits of the address.
// Default 32: one key per address. bits outside 1..32 is R4C-ATR-007. It applies as
// IPv6Prefix does.
func IPv4Prefix(bits int) MiddlewareOption {
	return func(m *middleware) { m.ips.SetIPv4Prefix(bits) }
}

// ClientIP returns the key function that Middleware uses by default, configured by the
// same options: the client of a request, as the address of its connection (RemoteAddr),
// or as read from the forwarding header (ForwardedHeader) when the connection comes from
// one of the TrustedProxies; then keyed by its network, IPv4Prefix and IPv6Prefix. Use it
// to build a KeyFunc that falls back on the client, e.g. for requests without an API key.
// Options other than TrustedProxies, ForwardedHeader, IPv4Prefix and IPv6Prefix are
// ignored. It returns a *policy.ConfigError: R4C-ATR-007 for a prefix length out of
// range, R4C-REG-010 for an invalid trusted proxy prefix.
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

// clientIPs finds the client of requests and keys it by network: the clientip.Finder,
// fed with the request's RemoteAddr and the values of the forwarding header.
type clientIPs struct {
	clientip.Finder
	header string // the forwarding header, canonical
}

func newClientIPs() clientIPs {
	return clientIPs{Finder: clientip.New(), header: headerXFF}
}

// setHeader names the forwarding header; "" is the default, X-Forwarded-For.
func (c *clientIPs) setHeader(name string) {
	c.header = http.CanonicalHeaderKey(name)
	if c.header == "" {
		c.header = headerXFF
	}
	c.SetForwarded(c.header)
}

// validate checks the prefix lengths and makes the key cache.
func (c *clientIPs) validate() error { return c.Validate("resiliencehttp") }

// of returns the key of r's client.
func (c *clientIPs) of(r *http.Request) string {
	var forwarded []string
	if c.Trusting() {
		forwarded = r.Header[c.header]
	}
	return c.KeyOf(r.RemoteAddr, forwarded)
}
