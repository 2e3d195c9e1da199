package resilience

// maxKeyLen is the length, in bytes, of the longest key LoadProperties and LoadYAML read
// and of the longest variable name after the prefix that FromEnv reads (their docs say
// 1,024 bytes): no configuration key needs more, and the bound keeps the work of a
// malformed source in proportion to its size.
const maxKeyLen = 1024
