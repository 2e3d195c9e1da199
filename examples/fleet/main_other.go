//go:build !unix

// Command fleet runs a fleet of processes on one quota in Redis; it needs a Unix system.
package main

import "fmt"

func main() { fmt.Println("fleet needs a Unix system (it shares memory with its instances)") }
