// Package resiliencegrpc guards gRPC servers and clients with resilience4go's policies,
// as interceptors.
//
// On a server, NewServer builds a Server from Limits (a rate limit per key, the peer by
// default), Guards (a composition of a registry's policies, such as a bulkhead, for some
// methods) and Exempt methods. A call a Limit refuses ends with ResourceExhausted and
// the exact time until its key's next permit, in a google.rpc.RetryInfo detail and the
// grpc-retry-pushback-ms trailer:
//
//	perPeer, err := keyed.New[string](ratelimit.Permits(10), ratelimit.Period(time.Second))
//	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer, nil),
//		resiliencegrpc.Exempt(resiliencegrpc.HealthAndReflection...))
//	s := grpc.NewServer(grpc.ChainUnaryInterceptor(srv.UnaryInterceptor()),
//		grpc.ChainStreamInterceptor(srv.StreamInterceptor()))
//
// On a client, NewClient builds a Client that sends each call through a composition of
// a registry's policies, reading each status the server sends as an error they act on:
//
//	cl, err := resiliencegrpc.NewClient(reg, "catalog", resiliencegrpc.ClientConfig{},
//		resilience.Retry(retry.MaxAttempts(3)), resilience.Timeout(time.Second))
//	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds),
//		grpc.WithChainUnaryInterceptor(cl.UnaryInterceptor()),
//		grpc.WithChainStreamInterceptor(cl.StreamInterceptor()))
//
// Where the detail lives: NewServer (a fuller example), Limit, Guard and the Server's
// interceptors (keys, refusals, streams); PriorityMetadata and PriorityFunc (each call's
// priority, for the policies that shed by it); NewClient (a fuller example, statuses as
// errors, the client's retry beside gRPC's own) and ClientConfig; Status (the policies'
// errors as gRPC statuses) and RetryDelay.
//
// The package lives in the main module: a program that does not import it compiles none
// of gRPC.
package resiliencegrpc
