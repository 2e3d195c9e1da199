package resiliencegrpc_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// retryServiceConfig is a service config whose retry policy retries every method of the
// test service once on Unavailable: gRPC's own retry, which replays a stream's messages
// while the server has sent nothing back.
const retryServiceConfig = `{"methodConfig": [{
	"name": [{"service": "grpc.testing.TestService"}],
	"retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

// SPEC GR-8: the stream interceptor leaves gRPC's own retries of a stream alone (a
// service config's retryPolicy, transparent retries): it does not commit the stream by
// asking for its Context before the stream is committed. The server fails the stream's
// first run with Unavailable before sending anything; gRPC retries it, with and without
// the interceptor.
func TestGR8_StreamInterceptorKeepsGRPCRetries(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := break2Client(t, reg, resiliencegrpc.ClientConfig{}) // no policy at all
	ts := startServer(t, bufnet, nil)
	for _, tc := range []struct {
		name string
		cl   *resiliencegrpc.Client
	}{{"plain gRPC", nil}, {"through the interceptor", cl}} {
		t.Run(tc.name, func(t *testing.T) {
			before := ts.svc.count("StreamingOutputCall")
			ts.svc.script("StreamingOutputCall", fails(codes.Unavailable))
			conn := ts.dial(t, tc.cl, grpc.WithDefaultServiceConfig(retryServiceConfig))
			s, err := testpb.NewTestServiceClient(conn).StreamingOutputCall(context.Background(), outputRequestOf(0))
			require.NoError(t, err)
			n, err := 0, error(nil)
			for err == nil {
				if _, err = s.Recv(); err == nil {
					n++
				}
			}
			assert.ErrorIs(t, err, io.EOF, "gRPC's retry of the stream did not happen: %v", err)
			assert.Zero(t, n)
			assert.Equal(t, 2, ts.svc.count("StreamingOutputCall")-before)
		})
	}
}

// outputRequestOf asks a StreamingOutputCall for n responses.
func outputRequestOf(n int) *testpb.StreamingOutputCallRequest {
	req := &testpb.StreamingOutputCallRequest{}
	for range n {
		req.ResponseParameters = append(req.ResponseParameters, &testpb.ResponseParameters{})
	}
	return req
}
