package resiliencegrpc

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/retryhint"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"
)

// retryInfoURL is the type URL of a google.rpc.RetryInfo in an Any.
const retryInfoURL = "type.googleapis.com/google.rpc.RetryInfo"

// refusedWithRetry returns a ResourceExhausted status with a RetryInfo detail of wait (0 when
// negative). The detail is encoded here, field by field, rather than marshalled through
// reflection, into a draft of the status taken from a pool: status.FromProto clones the
// draft, so the draft can be reused at once, and a refusal allocates only the clone.
func refusedWithRetry(msg string, wait time.Duration) *status.Status {
	d := drafts.Get().(*statusDraft)
	d.detail.TypeUrl = retryInfoURL
	d.detail.Value = appendRetryInfo(d.buf[:0], max(wait, 0))
	d.details[0] = &d.detail
	d.st.Code, d.st.Message, d.st.Details = int32(codes.ResourceExhausted), msg, d.details[:]
	st := status.FromProto(&d.st)
	d.st.Message = "" // keep no message alive in the pool
	drafts.Put(d)
	return st
}

// retryInfoMaxLen bounds the wire size of a RetryInfo of a non-negative time.Duration: two
// tags and a length (3 bytes), and two varints of at most 5 bytes each (seconds below
// 2^34, nanoseconds below 2^30).
const retryInfoMaxLen = 16

// A statusDraft is the proto that refusedWithRetry hands to status.FromProto, with room for its
// one detail: a status, its Any, the slice that holds it and the Any's bytes, in one
// object that the pool reuses.
type statusDraft struct {
	st      spb.Status
	detail  anypb.Any
	details [1]*anypb.Any
	buf     [retryInfoMaxLen]byte
}

// drafts holds the statusDrafts that are not in use.
var drafts = sync.Pool{New: func() any { return new(statusDraft) }}

// appendRetryInfo appends the wire encoding of RetryInfo{retry_delay: d} to b: field 1, a
// google.protobuf.Duration of field 1 seconds and field 2 nanos, each left out when 0.
func appendRetryInfo(b []byte, d time.Duration) []byte {
	sec, nanos := uint64(d/time.Second), uint64(d%time.Second)
	n := 0
	if sec != 0 {
		n += 1 + protowire.SizeVarint(sec)
	}
	if nanos != 0 {
		n += 1 + protowire.SizeVarint(nanos)
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	if sec != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, sec)
	}
	if nanos != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, nanos)
	}
	return b
}

// pushbackHeader is the trailer in which a server tells a client how long to wait before
// it retries, in whole milliseconds (gRFC A6): the one that gRPC's own retries read.
const pushbackHeader = "grpc-retry-pushback-ms"

// pushbackMillis returns d in whole milliseconds, rounded up so that a client that waits
// them never comes back before d has passed; 0 for a negative d.
func pushbackMillis(d time.Duration) int64 { return retryhint.Ceil(d, time.Millisecond) }

// pushbackDelay returns d rounded up to the millisecond, as the pushback trailer sends it.
func pushbackDelay(d time.Duration) time.Duration {
	ms := pushbackMillis(d)
	if ms > int64(1<<63-1)/int64(time.Millisecond) {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(ms) * time.Millisecond
}

// pushback returns the trailer that asks a client to wait d before it retries.
func pushback(d time.Duration) metadata.MD {
	return metadata.MD{pushbackHeader: {strconv.FormatInt(pushbackMillis(d), 10)}}
}

// sharedPushbacks holds the trailers that sharedPushback returns: the one of n
// milliseconds at index n, made when first asked for.
var sharedPushbacks [1024]atomic.Pointer[metadata.MD]

// sharedPushback returns pushback(d), shared by every call that waits as many whole
// milliseconds (up to a second): a refusal then allocates no trailer of its own. It is
// only for grpc.SetTrailer, whose stream merges it into a map of its own
// (metadata.Join), and must not be modified.
func sharedPushback(d time.Duration) metadata.MD {
	ms := pushbackMillis(d)
	if ms >= int64(len(sharedPushbacks)) {
		return pushback(d)
	}
	p := &sharedPushbacks[ms]
	if md := p.Load(); md != nil {
		return *md
	}
	md := pushback(d)
	if p.CompareAndSwap(nil, &md) {
		return md
	}
	return *p.Load()
}

// RetryDelay returns the retry_delay of the google.rpc.RetryInfo detail of err's status,
// and false when err has no status or its status has no RetryInfo (or a negative or
// invalid delay). Use it to read what a server running this package's interceptors (or
// any server that sends RetryInfo) asks a refused client to wait.
func RetryDelay(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok || st == nil {
		return 0, false
	}
	return retryInfo(st)
}

func retryInfo(st *status.Status) (time.Duration, bool) {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			if err := ri.GetRetryDelay().CheckValid(); err != nil {
				return 0, false
			}
			if wait := ri.GetRetryDelay().AsDuration(); wait >= 0 {
				return wait, true
			}
			return 0, false
		}
	}
	return 0, false
}
