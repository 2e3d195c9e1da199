package policy_test

import (
	"errors"
	"fmt"

	"github.com/resilience4go/resilience4go/policy"
)

func ExampleParseDuration() {
	d, err := policy.ParseDuration(" 1m30s ")
	fmt.Println(d, err)

	_, err = policy.ParseDuration("10 parsecs")
	var ce *policy.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Code)
	}
	// Output:
	// 1m30s <nil>
	// R4C-ATR-001
}

func ExampleConfigError() {
	err := fmt.Errorf("wrapping SearchAPI.Search: %w", &policy.ConfigError{
		Code:   "R4C-ATR-003",
		Key:    "rateLimiter.permits",
		Value:  "0",
		Reason: "permits must be at least 1",
	})
	fmt.Println(err)

	var ce *policy.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Code, ce.Key)
	}
	fmt.Println(errors.Is(err, &policy.ConfigError{Code: "R4C-ATR-003"}))
	// Output:
	// wrapping SearchAPI.Search: R4C-ATR-003: rateLimiter.permits = "0": permits must be at least 1
	// R4C-ATR-003 rateLimiter.permits
	// true
}
