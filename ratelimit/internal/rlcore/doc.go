// Package rlcore is the machinery that package ratelimit's Limiter and package
// ratelimit/keyed's limiter share: the GCRA schedule with its freed slots, the rate a
// configuration gives, its change to another rate, the settings the options produce and
// the data of a reservation. It also
// holds what package ratelimit gives package keyed when it initializes (its error and
// reservation constructors), as keyed cannot reach ratelimit's unexported names.
package rlcore
