// Package resiliencehttp puts resilience4go on both sides of HTTP, as the standard small
// pieces: server middleware, a func(http.Handler) http.Handler, that stops one client
// from flooding a shared service; and a client transport, an http.RoundTripper, that
// keeps a client within a dependency's quota and rides out its failures.
//
// On the server, NewMiddleware limits each client with a KeyedLimiter, usually a
// keyed.Limiter[string] (package ratelimit/keyed), keyed by the client's network (its
// IPv4 address, or the /64 of its IPv6 address) or by KeyFunc; a refused request is
// answered 429 Too Many Requests with Retry-After and the RateLimit-Policy and RateLimit
// fields of draft-ietf-httpapi-ratelimit-headers-09:
//
//	perClient, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second))
//	limit, err := resiliencehttp.NewMiddleware(perClient)
//	http.ListenAndServe(":8080", limit(mux))
//
// On the client, NewTransport sends each request through a composition of a registry's
// policies; with a retry among them, it retries 429 and 503 as Retry-After says, never
// sends a request before its rate limiter's permit is due, and returns the last
// response, not an error, when the retries are spent:
//
//	tr, err := resiliencehttp.NewTransport(reg, "greeter", nil, resiliencehttp.TransportConfig{},
//		resilience.Retry(retry.MaxAttempts(3)),
//		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
//	client := &http.Client{Transport: tr}
//
// Where the detail lives: NewMiddleware (keys, canonical addresses, the response of a
// refusal and its headers, costs) and its options (TrustedProxies, IPv4Prefix,
// LegacyHeaders, OnReject, Exempt, AlwaysSendHeaders, and PriorityHeader and PriorityFunc,
// which give each request its priority for the policies behind the middleware); NewTransport (the order of the
// policies, bodies, what RoundTrip returns, the rate limiter's permit), TransportConfig
// (which statuses are retried and which are failures), StatusError and ErrNotFailure
// (what the policies see of a response).
package resiliencehttp
