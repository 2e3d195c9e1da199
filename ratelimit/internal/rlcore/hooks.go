package rlcore

// What package ratelimit gives package ratelimit/keyed, set by ratelimit when it
// initializes (keyed imports ratelimit, so it reads them after): the constructors of
// ratelimit's error and reservation types, whose fields keyed cannot set. Each is a
// function of a type that names ratelimit's types, held as any; keyed asserts it once.
var (
	// NewExceeded is func(id string, cause error) *ratelimit.ExceededError: a keyed
	// limiter's rejection, which tells no retry-after (each key has its own).
	NewExceeded any
	// NewBurst is func(id string, permits int) error: the refusal of a call for more than
	// permits permits, matching ratelimit.ErrExceedsBurst.
	NewBurst func(id string, permits int) error
	// ErrZero is the rejection of every call through a limiter never built.
	ErrZero error
	// WrapReservation is func(Reservation) ratelimit.Reservation.
	WrapReservation any
)
