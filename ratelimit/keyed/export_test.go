package keyed

import (
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// AvailablePermits is k.AvailablePermits(key), for the tests written as a function.
func AvailablePermits[K comparable](k *Limiter[K], key K) int { return k.AvailablePermits(key) }

// Rejection returns k's one rejection error, shared by every key.
func Rejection[K comparable](k *Limiter[K]) error {
	if !k.lim().built() {
		return rlcore.ErrZero
	}
	return k.lim().rej.Plain
}

// InstanceID returns k's instance id.
func InstanceID[K comparable](k *Limiter[K]) string { return k.lim().events.ID }

// ClockOf returns k's clock; nil for a zero Limiter.
func ClockOf[K comparable](k *Limiter[K]) clock.Clock { return k.lim().b.Clk }

// MaxKeysOf returns how many keys k holds at most.
func MaxKeysOf[K comparable](k *Limiter[K]) int { return k.maxKeys }

// MaxKeyBytesOf returns the length of the longest string key k keeps as it is.
func MaxKeyBytesOf[K comparable](k *Limiter[K]) int { return k.keyBytes }
