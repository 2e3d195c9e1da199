module github.com/resilience4go/resilience4go/bench

go 1.26.0

replace github.com/resilience4go/resilience4go => ../

require (
	github.com/avast/retry-go/v4 v4.7.0
	github.com/cenkalti/backoff/v5 v5.0.3
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/go-chi/httprate v0.16.1
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/grpc-ecosystem/go-grpc-middleware/v2 v2.3.4
	github.com/resilience4go/resilience4go v0.0.0-00010101000000-000000000000
	github.com/sethvargo/go-limiter v0.7.1
	github.com/sony/gobreaker/v2 v2.4.0
	github.com/stretchr/testify v1.12.1
	github.com/ulule/limiter/v3 v3.11.2
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.uber.org/goleak v1.3.0
	go.uber.org/ratelimit v0.3.1
	golang.org/x/sync v0.25.0
	golang.org/x/time v0.16.0
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/samber/lo v1.53.0 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

require (
	github.com/benbjohnson/clock v1.3.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/redis/go-redis/v9 v9.23.0
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
