package resilience

// MaxKeyLen is the length, in bytes, of the longest key LoadProperties and LoadYAML read
// and of the longest variable name after the prefix that FromEnv reads: no configuration
// key needs more, and the bound keeps the work of a malformed source in proportion to its
// size.
const MaxKeyLen = 1024
