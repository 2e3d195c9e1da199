package resiliencehttp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/resiliencehttp"
)

// The body of a 101 Switching Protocols response stays the connection the wrapped
// RoundTripper gave, readable and writable both ways; closing it closes the connection
// and ends the request's context.
func TestTransport_UpgradedBodyIsTheConnection(t *testing.T) {
	f := newFixture(t)
	ours, theirs := net.Pipe()
	defer theirs.Close()
	var seen context.Context
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Context()
		return &http.Response{StatusCode: http.StatusSwitchingProtocols, Status: "101 Switching Protocols",
			Header: http.Header{}, Body: ours, Request: r}, nil
	})
	tr, err := resiliencehttp.NewTransport(f.reg, "api", inner, resiliencehttp.TransportConfig{})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, "http://upgrade.example/ws", nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	conn, ok := resp.Body.(io.ReadWriteCloser)
	require.True(t, ok, "the body is writable")

	go func() { _, _ = conn.Write([]byte("ping")) }()
	buf := make([]byte, 4)
	_, err = io.ReadFull(theirs, buf)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(buf), "what the client writes reaches the server")

	go func() { _, _ = theirs.Write([]byte("pong")) }()
	_, err = io.ReadFull(conn, buf)
	require.NoError(t, err)
	assert.Equal(t, "pong", string(buf), "what the server writes reaches the client")

	assert.NoError(t, seen.Err(), "the request's context lasts while the connection is open")
	require.NoError(t, conn.Close())
	assert.Error(t, seen.Err(), "closing the body ends the request's context")
	_, err = theirs.Read(buf)
	assert.ErrorIs(t, err, io.EOF, "closing the body closes the connection")
}
