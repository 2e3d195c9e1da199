// Package aliases holds interfaces whose files import packages under other names, which
// their error lists and signatures use, in a package that declares names the generated
// file's imports would take, with their generated wrappers.
package aliases

import (
	ctxpkg "context"
	stderrors "errors"
	"fmt"
	iofs "io/fs"
	u "net/url"

	rasync "github.com/resilience4go/resilience4go/async"
)

//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen

// The package declares names that the generated file's imports would otherwise take.
var (
	// fs is the name of package io/fs.
	fs = iofs.ModeDir
	// time is the name of package time.
	time = "noon"
	// ratelimit is the name of package ratelimit.
	ratelimit = 3
)

// retry is the name of package retry.
func retry() string { return fmt.Sprint(time, fs, ratelimit) }

var _ = retry

// ErrGone is an error of the package, named among imported ones.
var ErrGone = stderrors.New("aliases: gone")

// Resolver names its errors and types through the names its file imports them under.
type Resolver interface {
	// Resolve aborts its retries on errors of packages imported under other names.
	//
	//resilience:retry maxAttempts=3 delay=10ms abortOn=iofs.ErrNotExist,ctxpkg.DeadlineExceeded,stderrors.ErrUnsupported,ErrGone
	//resilience:ratelimiter permits=10 period=1s
	Resolve(ctx ctxpkg.Context, ref string) (*u.URL, error)

	// ResolveAsync returns a future of a type of an aliased package.
	//
	//resilience:timeout duration=250ms
	ResolveAsync(ctx ctxpkg.Context, ref string) *rasync.Future[*u.URL]
}
