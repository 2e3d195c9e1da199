package contract

// Conventional fills in the fields of d that most policies spell alike, and returns d:
// Common, the Common their settings S embed (Settings); Build,
// build; Validate, validate; ID, what id returns for an instance; Of, the configuration
// config returns for it. P is the policy's instance type: each function takes it, not an
// Instance, and an instance of another type makes ID and Of panic, as a failed type
// assertion does. The fields d sets itself beside these (State, Result, Compose…) stay.
func Conventional[S any, PS Settings[S], P Instance, C any](d *Descriptor[S], build func(S) (P, error), validate func(*S) error,
	id func(P) string, config func(P) C) *Descriptor[S] {
	d.Common = func(s *S) *Common { return PS(s).Base() }
	d.Build = func(s S) (Instance, error) { return build(s) }
	d.Validate = validate
	d.ID = func(p Instance) string { return id(p.(P)) }
	d.Of = func(p Instance) any { return config(p.(P)) }
	return d
}

// Typed returns f as a function of an Instance, for a descriptor's State: f takes the
// policy's instance type P, and an instance of another type makes it panic.
func Typed[P Instance, R any](f func(P) R) func(Instance) any {
	return func(p Instance) any { return f(p.(P)) }
}
