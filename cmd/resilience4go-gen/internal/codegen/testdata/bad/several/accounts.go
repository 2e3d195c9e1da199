package several

import "context"

// Users is checked after Orders, but its file sorts first.
type Users interface {
	//resilience:timout duration=1s
	Get(ctx context.Context, id string) (string, error)

	//resilience:fallback method=missing
	Put(ctx context.Context, id string) error
}
