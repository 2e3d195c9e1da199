package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// SPEC GR-8: a Guard's timeout ends a stream whose handler reads messages (FullDuplexCall
// echoes each one) at the handler's next RecvMsg after the timeout: the client gets
// DeadlineExceeded instead of an echo.
func TestGR8_GuardTimeoutEndsTheStreamAtItsNextRecv(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "duplex",
		[]resilience.Spec{resilience.Timeout(time.Second)}, duplexCall))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	s, err := ts.client(t, nil).FullDuplexCall(context.Background())
	require.NoError(t, err)
	require.NoError(t, s.Send(&testpb.StreamingOutputCallRequest{}))
	_, err = s.Recv()
	require.NoError(t, err)

	clk.Advance(time.Second) // the Guard's timeout has passed
	_ = s.Send(&testpb.StreamingOutputCallRequest{})
	_, err = s.Recv()
	require.Equal(t, codes.DeadlineExceeded, status.Code(err), "got %v: the stream outlived its timeout", err)
}
