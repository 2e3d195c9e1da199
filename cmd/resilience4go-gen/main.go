// Command resilience4go-gen writes resilient wrappers for Go interfaces whose methods
// carry //resilience: directives in their doc comments. Run it through go generate:
//
//	//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen
//
// For each interface with a directive (or each one -type names), it writes a struct,
// <Interface>Resilient, that implements the interface, and its constructor,
// New<Interface>Resilient(impl, reg), which wraps each guarded method once with
// resilience.Wrap, Wrap1, Wrap2, WrapAsync or WrapAsync1, under the instance id
// "<Interface>.<Method>". The file is resilient_gen.go in the package's directory unless
// -output names another file there (a .go file every build compiles: no _test, _GOOS or
// _GOARCH suffix, no leading _ or .); it is gofmt-formatted, the same for the same input,
// and carries the build constraint of the interfaces' file (its //go:build or +build
// lines, the _GOOS or _GOARCH suffix of its name, cgo if it imports "C"), and of the files
// that declare the fallbacks and errors it names. A file without the generated-code line is never
// overwritten; an earlier generated file is read as empty, whatever it holds, so that a
// stale one never stops its regeneration.
//
// Usage:
//
//	resilience4go-gen [-type Name,Name] [-output file] [directory]
//
// The directory is the package's; default the current one (go generate's is the
// directory of the file with the //go:generate line).
//
// # Directives
//
// A directive is a line comment that starts with //resilience: (no space after the
// slashes; "// resilience:retry" is an error), the policy, then attributes written
// key=value, separated by spaces; a value with spaces is a Go quoted string. On an
// interface, a directive applies to every method that can be guarded; on a method, it
// replaces the interface's directive of the same policy, and //resilience:none leaves the
// interface's directives off the method. A method's directives follow it into the
// interfaces of the package that embed its interface, an alias of it or an instance of it
// when it is generic (a generic interface is wrapped only when -type names it, which is
// an error). A directive anywhere else (a group of types, a struct, a method's line
// comment), interface directives that apply to none of its methods, and a none that
// leaves nothing off are errors. The package's _test.go files are not read.
//
//	//resilience:ratelimiter permits=10 period=1s maxWait=200ms
//	//resilience:retry maxAttempts=3 delay=100ms abortOn=ErrNotFound
//	//resilience:circuitbreaker failureRateThreshold=50 waitInOpen=30s
//	//resilience:bulkhead maxConcurrent=10
//	//resilience:timeout duration=2s
//	//resilience:fallback method=unknownPrice
//	//resilience:hedge delay=50ms maxAttempts=3
//	//resilience:adaptivelimit algorithm=vegas maxLimit=100
//	//resilience:order layers=timeout,retry
//
// A policy's attributes are its configuration attributes (those of the keys
// instances.<id>.<policy>.<attribute>), and every policy has name= (a shared instance),
// config= (configuration keys configs.<name>.*) and enabled=. The error lists
// (retryOn, abortOn, recordOn, ignoreOn, handleOn, hedgeOn, dropOn) name error variables,
// separated by commas: ErrNotFound in the package, a package the file imports under the
// name it imports it with (io.EOF), or a package's import path
// (net/http.ErrServerClosed), which the file need not import, of a package this one may
// import: not itself, not a program, not one that imports it, not an internal package of
// another tree, not a vendored one. A fallback's method= is a method of the interface or a function of the package,
// func(context.Context, error) (T, error), or func(context.Context, error) error for a
// method that returns an error only. Configuration keys override what directives say, as
// they override options in code. Directives of one instance (a shared name, or a
// method's id) must agree: one attribute given two values is R4C-REG-008 at generation
// time, unless a directive has config=, whose configuration may make them agree.
//
// From another module, record the command as a tool once, so that go mod tidy keeps what
// it needs (golang.org/x/tools):
//
//	go get -tool github.com/resilience4go/resilience4go/cmd/resilience4go-gen
//
// and write the line //go:generate go tool resilience4go-gen.
//
// Values are checked with the policies' own rules: syntax always, and ranges unless the
// directive has config=, whose configuration may give the other attributes a value
// needs (a maxLimit for an initialLimit); those ranges are then checked by the
// constructor.
//
// A guarded method takes a context.Context first and returns (T, error), error, or
// *async.Future[T] (aliases of these types too); methods without directives call the
// implementation directly.
//
// # Errors
//
// Each error is printed as go vet prints one, "file:line:col: CODE: message", and the
// command exits with status 1 and writes nothing:
//
//   - R4C-GEN-001: an unknown directive, with a did-you-mean, or one written with a space
//     after the slashes;
//   - R4C-GEN-002: an unknown attribute, with a did-you-mean;
//   - R4C-GEN-003: an attribute without "=", empty, or given twice, a policy given twice
//     on one method or interface, a directive on an embedded interface or anywhere it
//     applies to nothing, or none misplaced;
//   - R4C-GEN-004: a guarded method without context.Context first, or without error (or
//     a future) last;
//   - R4C-GEN-005: a fallback method that does not exist, or a fallback without method=;
//   - R4C-GEN-006: a fallback method of the wrong signature;
//   - R4C-GEN-007: an error list naming something that is not an error variable;
//   - R4C-GEN-008: a -type that is not an interface of the package, a generic interface,
//     a package that does not load, a method the generated code could not implement or
//     name (an unexported method or type of another package, a type of an internal
//     package), two interfaces whose generated names clash, or interfaces in files of
//     different build constraints;
//   - the runtime's codes for values: R4C-ATR-001 (duration), R4C-ATR-005 (number),
//     R4C-ATR-006 (boolean), R4C-ATR-002, -003, -004, -007, -008 and R4C-REG-001 (out of
//     range); R4C-REG-008 for two directives of one shared name that disagree;
//     R4C-REG-011 for an order with an unknown or repeated layer; R4C-HDG-001 for a
//     hedge on a method that does not return a future, R4C-HDG-002 for a hedge beside a
//     retry.
//
// Exit status 2 means bad usage, a package that cannot be read, an -output outside the
// package's directory, or a file there that is not generated code.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/resilience4go/resilience4go/internal/codegen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run runs the command with args and returns its exit status, writing errors to stderr.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("resilience4go-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	types := fs.String("type", "", "comma-separated interfaces to wrap; default every interface with a //resilience: directive")
	output := fs.String("output", "", "the generated file, in the package's directory (a relative name is relative to it); default "+codegen.DefaultOutput)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: resilience4go-gen [-type Name,Name] [-output file] [directory]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	cfg := codegen.Config{Dir: fs.Arg(0), Output: *output}
	if *types != "" {
		for _, t := range strings.Split(*types, ",") {
			if t = strings.TrimSpace(t); t != "" {
				cfg.Types = append(cfg.Types, t)
			}
		}
	}
	res, err := codegen.Generate(cfg)
	var ds codegen.Diagnostics
	switch {
	case errors.As(err, &ds):
		wd, _ := os.Getwd()
		for _, d := range ds {
			if rel, err := filepath.Rel(wd, d.Pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
				d.Pos.Filename = rel
			}
			fmt.Fprintln(stderr, d)
		}
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "resilience4go-gen:", err)
		return 2
	}
	if old, err := os.ReadFile(res.Path); err == nil && string(old) == string(res.Source) {
		return 0 // unchanged: leave the file, and its time, alone
	}
	if err := os.WriteFile(res.Path, res.Source, 0o644); err != nil {
		fmt.Fprintln(stderr, "resilience4go-gen:", err)
		return 2
	}
	return 0
}
