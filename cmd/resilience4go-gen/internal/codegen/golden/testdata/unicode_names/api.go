// Package unicodenames has interfaces whose names start with a letter outside ASCII:
// exported (Überweisung) and not (ölpreis), with methods of three arguments, which need
// argument structs.
package unicodenames

import "context"

// Überweisung is exported: Ü is an upper-case letter.
type Überweisung interface {
	// Senden takes three arguments.
	//
	//resilience:timeout duration=1s
	Senden(ctx context.Context, von, an string, betrag int) error
}

// ölpreis is not exported: ö is a lower-case letter.
type ölpreis interface {
	// Preis takes three arguments.
	//
	//resilience:timeout duration=1s
	Preis(ctx context.Context, sorte, ort string, tag int) (int, error)
}

var _ ölpreis
