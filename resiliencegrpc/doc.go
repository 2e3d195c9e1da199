// Package resiliencegrpc guards gRPC servers and clients with resilience4go's policies.
//
// # Server
//
// NewServer builds a Server from Limits, Guards and Exempt methods; its UnaryInterceptor
// and StreamInterceptor go into grpc.NewServer:
//
//	perPeer, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second))
//	if err != nil {
//		return err
//	}
//	srv, err := resiliencegrpc.NewServer(
//		resiliencegrpc.Limit(perPeer, nil),                       // 10 calls/s per peer, every method
//		resiliencegrpc.Guard(reg, "search", []resilience.Spec{     // at most 4 searches at once
//			resilience.Bulkhead(bulkhead.MaxConcurrent(4))}, "/shop.Catalog/Search"),
//		resiliencegrpc.Exempt(resiliencegrpc.HealthAndReflection...),
//	)
//	s := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(srv.UnaryInterceptor()),
//		grpc.ChainStreamInterceptor(srv.StreamInterceptor()))
//
// A Limit keys calls by peer (the connection's address, or the address forwarded by
// TrustedProxies), by method (ByMethod), by metadata (ByMetadata) or by any function of
// the call; a call whose key is "" is keyed by its peer. A call it refuses ends with
// ResourceExhausted and a google.rpc.RetryInfo detail whose retry_delay is the exact
// time until the key's next permit (RetryDelay reads it on the client), the same delay in
// the grpc-retry-pushback-ms trailer, which gRPC's own retries read in every language,
// and a message that names the method and the quota. A Guard runs a method's calls
// through a composition of a registry's policies: a bulkhead or an adaptive limit per
// method, a timeout.
//
// # Client
//
// NewClient builds a Client that sends each call through a composition of a registry's
// policies; its UnaryInterceptor and StreamInterceptor go into grpc.NewClient:
//
//	cl, err := resiliencegrpc.NewClient(reg, "catalog",
//		resiliencegrpc.ClientConfig{
//			Idempotent: []string{"/shop.Catalog/"},         // may be retried
//			Exempt:     resiliencegrpc.HealthAndReflection, // through none of the policies
//		},
//		resilience.Retry(retry.MaxAttempts(3)),
//		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)),
//		resilience.Timeout(time.Second))
//	if err != nil {
//		return err
//	}
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(insecure.NewCredentials()), // or TLS credentials
//		grpc.WithChainUnaryInterceptor(cl.UnaryInterceptor()),
//		grpc.WithChainStreamInterceptor(cl.StreamInterceptor()))
//
// The client's policies guard every method of the connection, health checks included,
// but for the Exempt ones. Every status other than OK reaches the policies as an error
// that carries the status and says whether it may be retried (its code, the method's
// idempotency, the server's delay) and whether the breaker counts it. A retry waits the server's RetryInfo delay, or its
// grpc-retry-pushback-ms trailer, instead of its own backoff.
//
// # The client's retry and gRPC's
//
// gRPC retries a call itself when the connection's service config gives its method a
// retryPolicy; it does so below the interceptors. A method that has one is retried by
// gRPC only: the client's policies send each of its calls once (one attempt of theirs
// is one call of gRPC's, with all its attempts, under the per-attempt timeout), so that
// a call is never sent gRPC's attempts times the client's. Every other idempotent method
// is retried by the client's retry, and gRPC's transparent retries (of a call the
// server never saw) stay on, as gRPC has them. Use one of the two per method: gRPC's
// retryPolicy, which every gRPC client honours with the server's pushback, or the
// client's retry, which also waits for the client's own rate limiter and goes through
// its breaker on each attempt.
//
// # Errors
//
// Status maps the policies' errors to gRPC statuses: a rate limiter's refusal and a full
// bulkhead are ResourceExhausted, an open breaker Unavailable, a timeout DeadlineExceeded.
// The errors the interceptors return for those refusals carry the status (status.Code
// works on them) and unwrap to the policy's error (errors.Is(err, circuitbreaker.ErrOpen)
// works too). The error of a status the server sent matches ratelimit.ErrExceeded when
// the server's limiter refused the call, and the context's errors for DeadlineExceeded
// and Canceled.
//
// The package lives in the main module: a program that does not import it compiles none
// of gRPC.
package resiliencegrpc
