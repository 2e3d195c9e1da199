package pub

// T is in a test file: not counted.
func T() {}
