// Package shapes holds interfaces of every shape a generated wrapper handles, with every
// policy, and their generated wrappers.
package shapes

import (
	"context"
	"errors"
	"io"

	"github.com/resilience4go/resilience4go/async"
)

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// Errors the directives name.
var (
	ErrNotFound = errors.New("not found")
	ErrBadInput = errors.New("bad input")
)

// Price is a price in cents.
type Price struct {
	Cents    int64
	Currency string
}

// Quote is the price of a quantity.
type Quote struct {
	Price Price
	Qty   int
}

// PriceClient has a method of every shape.
//
//resilience:circuitbreaker failureRateThreshold=50 slidingWindowSize=20 slidingWindowType=TIME_BASED minimumCalls=5 waitInOpen=30s permittedInHalfOpen=2 maxWaitInHalfOpen=1s slowCallThreshold=2s slowCallRateThreshold=80 recordOn=ErrBadInput ignoreOn=ErrNotFound
type PriceClient interface {
	// Price has one argument, a rate limiter, a retry and a fallback function.
	//
	//resilience:ratelimiter permits=10 period=1s maxWait=200ms
	//resilience:retry maxAttempts=3 delay=100ms multiplier=2 maxDelay=1s jitter=0.1 waitForPermit=true abortOn=ErrNotFound,io.EOF retryOn=ErrBadInput
	//resilience:fallback method=unknownPrice handleOn=ErrBadInput ignoreOn=io.EOF
	Price(ctx context.Context, sku string) (Price, error)

	// Ping has no argument, returns an error only and has a timeout, locked against the
	// configuration keys, and a fallback.
	//
	//resilience:timeout duration=1500ms locked=true
	//resilience:fallback method=pingFallback
	Ping(ctx context.Context) error

	// Quote has three arguments, the last variadic, a bulkhead, a method of the interface
	// as its fallback, and the interface's breaker replaced by its own.
	//
	//resilience:bulkhead maxConcurrent=4 maxWait=10ms name=quotes
	//resilience:fallback method=QuoteFallback
	//resilience:circuitbreaker config=strict
	Quote(ctx context.Context, sku string, qty int, coupons ...string) (Quote, error)

	// Prices has two arguments.
	//
	//resilience:timeout config=slow enabled=false
	Prices(ctx context.Context, skus []string, currency string) ([]Price, error)

	// PriceAsync returns a future and is hedged.
	//
	//resilience:hedge delay=50ms maxAttempts=3 budgetPercent=20 budgetWindow=10s budgetMinPerSecond=5 budgetEnabled=true hedgeOn=ErrBadInput abortOn=ErrNotFound
	PriceAsync(ctx context.Context, sku string) *async.Future[Price]

	// Watch returns a future, has two arguments, an adaptive limit and an order.
	//
	//resilience:adaptivelimit algorithm=gradient2 initialLimit=10 minLimit=2 maxLimit=50 maxWait=5ms backoffRatio=0.9 latencyThreshold=20ms tolerance=2 smoothing=0.2 baselineWindow=50 dropOn=ErrBadInput ignoreOn=ErrNotFound
	//resilience:timeout duration=3s
	//resilience:order layers=timeout,circuitBreaker,adaptivelimit
	Watch(ctx context.Context, sku string, n int) *async.Future[[]Price]

	// Refresh has no argument and returns a future.
	Refresh(ctx context.Context) *async.Future[int]

	// QuoteFallback answers for Quote when its policies could not save a call.
	QuoteFallback(ctx context.Context, err error) (Quote, error)

	// Close takes no context, so the interface's directives pass it by.
	io.Closer
	// Name has no directive.
	Name() string
}

func unknownPrice(context.Context, error) (Price, error) { return Price{Currency: "EUR"}, nil }

func pingFallback(context.Context, error) error { return nil }
