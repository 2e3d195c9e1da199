package resiliencegrpc

import "context"

// The package's tests name its error types through these aliases.
type (
	Error       = policyError
	StatusError = serverError
)

// PeerKey is peerKey, for the package's tests.
func (s *Server) PeerKey(ctx context.Context, _ string) string { return s.peerKey(ctx) }
