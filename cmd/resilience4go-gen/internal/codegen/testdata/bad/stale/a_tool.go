//go:build ignore

// A program of the package's directory that the build leaves out: its package clause is
// not the package's.
package main

func main() {}
