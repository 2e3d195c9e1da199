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
// applies to the key of the client IP, with or without TrustedProxies: to every request
// without KeyFunc, to those for which KeyFunc returns "" with it.
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
