package codegen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

// The tests of the errors found at generation time (GN-6): one test per error, each on
// a package of testdata/bad that has that error alone, checking its code, its position
// and what its message says. Each loads its package with go list, so they run in
// parallel.

// at is an expected diagnostic.
type at struct {
	code      string
	file      string   // the file's base name; for a diagnostic about the package, its directory's
	line, col int      // 0, 0 for a diagnostic about the package
	says      []string // parts of the message
}

// diagnose generates the package testdata/bad/<name>, for the interfaces types (none:
// every interface with a directive), and returns its diagnostics. Generation must fail
// with Diagnostics and no result.
func diagnose(t *testing.T, name string, types ...string) codegen.Diagnostics {
	t.Helper()
	t.Parallel()
	dir := filepath.Join("testdata", "bad", name)
	res, err := codegen.Generate(codegen.Config{Dir: dir, Types: types})
	require.Error(t, err, "generating %s", dir)
	assert.Nil(t, res, "a failed generation has no result")
	var ds codegen.Diagnostics
	require.ErrorAs(t, err, &ds, "the errors of %s are Diagnostics", dir)
	require.NotEmpty(t, ds)
	assert.NoFileExists(t, filepath.Join(dir, codegen.DefaultOutput), "generating writes nothing")
	return ds
}

// expect checks that ds is exactly want, in order.
func expect(t *testing.T, ds codegen.Diagnostics, want ...at) {
	t.Helper()
	require.Len(t, ds, len(want), "diagnostics:\n%v", ds)
	for i, w := range want {
		d := ds[i]
		assert.Equal(t, w.code, d.Code, "code of %v", d)
		assert.True(t, filepath.IsAbs(d.Pos.Filename), "the file of %v is absolute", d)
		assert.Equal(t, w.file, filepath.Base(d.Pos.Filename), "file of %v", d)
		assert.Equal(t, w.line, d.Pos.Line, "line of %v", d)
		assert.Equal(t, w.col, d.Pos.Column, "column of %v", d)
		for _, s := range w.says {
			assert.Contains(t, d.Message, s, "message of %v", d)
		}
		assert.NotContains(t, d.Message, "\n", "a message is one line")
		assert.True(t, strings.HasSuffix(d.String(), ": "+d.Code+": "+d.Message), "vet form: %v", d)
	}
}

// --- R4C-GEN-001 … R4C-GEN-003: the directive's syntax (GN-1, GN-2) ---

// An unknown directive is reported at its name, with the nearest directive.
func TestErrorUnknownDirective(t *testing.T) {
	expect(t, diagnose(t, "unknown_directive"), at{codegen.CodeUnknownDirective, "api.go", 8, 15,
		[]string{"unknown directive //resilience:ratelimitter", "did you mean //resilience:ratelimiter?"}})
}

// An unknown attribute is reported at its key, with the nearest attribute.
func TestErrorUnknownAttribute(t *testing.T) {
	expect(t, diagnose(t, "unknown_attribute"), at{codegen.CodeUnknownAttribute, "api.go", 8, 27,
		[]string{`ratelimiter has no attribute "permit"`, "did you mean permits?"}})
}

// An attribute without "=" is reported at its key.
func TestErrorAttributeWithoutValue(t *testing.T) {
	expect(t, diagnose(t, "attribute_without_value"), at{codegen.CodeMalformed, "api.go", 8, 21,
		[]string{"retry maxAttempts", "key=value"}})
}

// An attribute with an empty value is reported at its key.
func TestErrorAttributeEmptyValue(t *testing.T) {
	expect(t, diagnose(t, "empty_value"), at{codegen.CodeMalformed, "api.go", 8, 24,
		[]string{"bulkhead maxConcurrent", "the value is empty"}})
}

// An attribute given twice is reported at its second key.
func TestErrorAttributeGivenTwice(t *testing.T) {
	expect(t, diagnose(t, "attribute_twice"), at{codegen.CodeMalformed, "api.go", 8, 47,
		[]string{"retry maxAttempts", "given twice"}})
}

// A policy given twice on one method is reported at its second directive's name, with
// the line of the first.
func TestErrorPolicyGivenTwice(t *testing.T) {
	expect(t, diagnose(t, "policy_twice"), at{codegen.CodeMalformed, "api.go", 12, 15,
		[]string{"retry is given twice", "at line 10"}})
}

// An order without layers= is reported at the directive's name.
func TestErrorOrderWithoutLayers(t *testing.T) {
	expect(t, diagnose(t, "order_without_layers"), at{codegen.CodeMalformed, "api.go", 9, 15,
		[]string{"order needs layers="}})
}

// --- the runtime's codes for values, at the value (GN-2, GN-6) ---

// RL-1's period of the wrong syntax: R4C-ATR-001.
func TestErrorMalformedDuration(t *testing.T) {
	expect(t, diagnose(t, "bad_duration"), at{r4c.BadDuration, "api.go", 8, 45,
		[]string{`rateLimiter.period = "1x"`, "not a duration"}})
}

// A number of the wrong syntax: R4C-ATR-005.
func TestErrorMalformedNumber(t *testing.T) {
	expect(t, diagnose(t, "bad_number"), at{r4c.BadNumber, "api.go", 8, 35,
		[]string{`rateLimiter.permits = "ten"`, "not a whole number"}})
}

// A boolean of the wrong syntax: R4C-ATR-006.
func TestErrorBadBoolean(t *testing.T) {
	expect(t, diagnose(t, "bad_boolean"), at{r4c.BadBoolean, "api.go", 8, 49,
		[]string{`retry.waitForPermit = "yes"`, "not a boolean"}})
}

// locked=yes: R4C-ATR-006, as for a configuration attribute.
func TestErrorBadLocked(t *testing.T) {
	expect(t, diagnose(t, "bad_locked"), at{r4c.BadBoolean, "api.go", 8, 42,
		[]string{`timeout.locked = "yes"`, "not a boolean"}})
}

// permits=0: R4C-ATR-003.
func TestErrorZeroPermits(t *testing.T) {
	expect(t, diagnose(t, "zero_permits"), at{r4c.BadPermits, "api.go", 8, 35,
		[]string{`rateLimiter.permits = "0"`, "at least 1"}})
}

// period=0: R4C-ATR-002.
func TestErrorZeroPeriod(t *testing.T) {
	expect(t, diagnose(t, "zero_period"), at{r4c.ZeroPeriod, "api.go", 8, 45,
		[]string{`rateLimiter.period = "0"`, "must be positive"}})
}

// A negative maxWait: R4C-ATR-004.
func TestErrorNegativeWait(t *testing.T) {
	expect(t, diagnose(t, "negative_wait"), at{r4c.NegativeDuration, "api.go", 8, 48,
		[]string{`bulkhead.maxWait = "-1s"`, "must not be negative"}})
}

// A failure rate above 100%: R4C-ATR-007.
func TestErrorRateOutOfRange(t *testing.T) {
	expect(t, diagnose(t, "rate_out_of_range"), at{r4c.OutOfRange, "api.go", 8, 51,
		[]string{`circuitBreaker.failureRateThreshold = "150"`, "at most 100"}})
}

// A hedge of one attempt: R4C-ATR-008.
func TestErrorHedgeAttempts(t *testing.T) {
	expect(t, diagnose(t, "hedge_attempts"), at{r4c.BadAttempts, "api.go", 12, 44,
		[]string{`hedge.maxAttempts = "1"`, "between 2 and 10"}})
}

// RL-1: a period shorter than 1ns per permit: R4C-REG-001.
func TestErrorPeriodTooShort(t *testing.T) {
	expect(t, diagnose(t, "period_too_short"), at{r4c.PeriodTooShort, "api.go", 8, 45,
		[]string{`rateLimiter.period = "5ns"`, "at least 10ns"}})
}

// Each value out of range is an error, whatever the other attributes are: a period of
// 0 or a negative maxWait is wrong whether or not permits is given (by instance keys), a
// negative delay is wrong beside a maxAttempts of 0, a smoothing of 5 beside a maxLimit
// that the default initialLimit does not fit, which is reported at the directive (fault:
// the range check stopped at its first error, the unset permits, the maxAttempts or the
// initialLimit, so the others passed generation and failed only in NewAPIResilient). A
// directive with config= leaves ranges to the constructor: initialLimit=300 is valid with
// a configuration that raises maxLimit.
func TestErrorRangeEachValue(t *testing.T) {
	expect(t, diagnose(t, "range_without_permits"),
		at{r4c.ZeroPeriod, "api.go", 10, 34, []string{`rateLimiter.period = "0"`}},
		at{r4c.NegativeDuration, "api.go", 13, 35, []string{`rateLimiter.maxWait = "-1s"`}},
		at{r4c.OutOfRange, "api.go", 16, 33, []string{`retry.maxAttempts = "0"`}},
		at{r4c.NegativeDuration, "api.go", 16, 41, []string{`retry.delay = "-1s"`}},
		at{r4c.OutOfRange, "api.go", 19, 15, []string{`adaptiveLimit.initialLimit = "20"`, "the default initialLimit does not fit this directive's values"}},
		at{r4c.OutOfRange, "api.go", 19, 51, []string{`adaptiveLimit.smoothing = "5"`}},
		// Once each, with the value written (fault: again with the default 20, and with
		// the 1s the check assumes for a period).
		at{r4c.OutOfRange, "api.go", 25, 42, []string{`adaptiveLimit.initialLimit = "2"`}},
		at{r4c.PeriodTooShort, "api.go", 28, 53, []string{`rateLimiter.period = "1ns"`}})
}

// --- R4C-GEN-004: the method's shape (GN-3) ---

// A guarded method without a context first is reported at its first directive; the
// method beside it, of the right shape, is not.
func TestErrorMethodWithoutContext(t *testing.T) {
	expect(t, diagnose(t, "shape_no_context"), at{codegen.CodeMethodShape, "api.go", 10, 15,
		[]string{"Get:", "takes a context.Context first"}})
}

// A guarded method without an error last is reported at its first directive.
func TestErrorMethodWithoutError(t *testing.T) {
	expect(t, diagnose(t, "shape_no_error"), at{codegen.CodeMethodShape, "api.go", 8, 15,
		[]string{"Get:", "returns error last"}})
}

// --- R4C-GEN-005, R4C-GEN-006: the fallback ---

// A fallback method that does not exist is reported at method='s value, with the
// nearest function.
func TestErrorFallbackMissing(t *testing.T) {
	expect(t, diagnose(t, "fallback_missing"), at{codegen.CodeNoFallback, "api.go", 8, 31,
		[]string{`fallback method "unknownPrise"`, "did you mean unknownPrice?"}})
}

// A fallback without method= is reported at the directive's name.
func TestErrorFallbackWithoutMethod(t *testing.T) {
	expect(t, diagnose(t, "fallback_without_method"), at{codegen.CodeNoFallback, "api.go", 14, 15,
		[]string{"fallback needs method="}})
}

// A fallback function of the wrong result type is reported at method='s value, with the
// type it must have.
func TestErrorFallbackWrongResult(t *testing.T) {
	expect(t, diagnose(t, "fallback_wrong_result"), at{codegen.CodeFallbackType, "api.go", 8, 31,
		[]string{"fallback unknownPrice is func(context.Context, error) (string, error)",
			"must be func(context.Context, error) (int64, error)"}})
}

// A fallback method of the interface with the wrong parameters.
func TestErrorFallbackWrongParams(t *testing.T) {
	expect(t, diagnose(t, "fallback_wrong_params"), at{codegen.CodeFallbackType, "api.go", 10, 31,
		[]string{"fallback PriceFallback is func(ctx context.Context, sku string) (int64, error)",
			"must be func(context.Context, error) (int64, error)"}})
}

// A value fallback for a method that returns an error only.
func TestErrorFallbackForErrorOnly(t *testing.T) {
	expect(t, diagnose(t, "fallback_error_only"), at{codegen.CodeFallbackType, "api.go", 8, 31,
		[]string{"fallback pingFallback is func(context.Context, error) (int, error)",
			"must be func(context.Context, error) error"}})
}

// --- the hedge (HG-1) ---

// A hedge on a method that returns no future: R4C-HDG-001, at the hedge's name.
func TestErrorHedgeOnSyncMethod(t *testing.T) {
	expect(t, diagnose(t, "hedge_sync"), at{"R4C-HDG-001", "api.go", 8, 15,
		[]string{"Get: a hedge guards a method that returns *async.Future[T]"}})
}

// A hedge on the interface applies to the methods that can be guarded (GN-3): the one
// that returns an error is reported, at the interface's directive; the future and the
// method without a context are not.
func TestErrorHedgeOnSyncMethodFromInterface(t *testing.T) {
	expect(t, diagnose(t, "hedge_interface"), at{"R4C-HDG-001", "api.go", 12, 14,
		[]string{"Put: a hedge guards a method that returns *async.Future[T]"}})
}

// A hedge beside a retry: R4C-HDG-002, at the later of the two directives.
func TestErrorHedgeWithRetry(t *testing.T) {
	expect(t, diagnose(t, "hedge_with_retry"), at{"R4C-HDG-002", "api.go", 15, 15,
		[]string{"Get: a hedge and a retry"}})
}

// --- R4C-REG-011: the order ---

// An order naming an unknown layer, at layers='s value, with the nearest layer.
func TestErrorOrderUnknownLayer(t *testing.T) {
	expect(t, diagnose(t, "order_unknown_layer"), at{r4c.BadOrder, "api.go", 10, 28,
		[]string{`"retri" is not a layer`, "did you mean retry?"}})
}

// An order naming a layer twice, in two spellings.
func TestErrorOrderRepeatedLayer(t *testing.T) {
	expect(t, diagnose(t, "order_repeated_layer"), at{r4c.BadOrder, "api.go", 10, 28,
		[]string{"the layer timeout is named twice"}})
}

// --- R4C-GEN-007: the error lists (GN-2) ---

// An error variable that does not exist, at the list's value, with the nearest one.
func TestErrorListUnknownVariable(t *testing.T) {
	expect(t, diagnose(t, "errors_unknown"), at{codegen.CodeUnknownError, "api.go", 14, 43,
		[]string{"abortOn: ErrNotFund is not declared", "did you mean ErrNotFound?"}})
}

// A variable that is not an error, second in its list.
func TestErrorListNotAnError(t *testing.T) {
	expect(t, diagnose(t, "errors_not_error"), at{codegen.CodeUnknownError, "api.go", 17, 55,
		[]string{"abortOn: MaxSize is not a variable of a type that implements error"}})
}

// An error of a package that the directive's file does not import.
func TestErrorListPackageNotImported(t *testing.T) {
	expect(t, diagnose(t, "errors_not_imported"), at{codegen.CodeUnknownError, "api.go", 9, 39,
		[]string{`recordOn: "iox" is neither a package the file imports nor the path of a package`}})
}

// --- R4C-GEN-008: the target ---

// A -type that the package does not declare, reported for the package's directory, with
// the nearest interface.
func TestErrorTypeMissing(t *testing.T) {
	expect(t, diagnose(t, "type_missing", "SerchAPI"), at{codegen.CodeBadTarget, "type_missing", 0, 0,
		[]string{"package typemissing declares no interface SerchAPI", "did you mean SearchAPI?"}})
}

// A -type that is a struct, not an interface.
func TestErrorTypeNotInterface(t *testing.T) {
	expect(t, diagnose(t, "type_missing", "Client"), at{codegen.CodeBadTarget, "type_missing", 0, 0,
		[]string{"package typemissing declares no interface Client"}})
}

// A generic interface named by -type, at its name; without -type, it is not wrapped (its
// methods' directives serve the interfaces that embed an instance of it), which leaves
// nothing to generate here.
func TestErrorGenericInterface(t *testing.T) {
	expect(t, diagnose(t, "generic", "Store"), at{codegen.CodeBadTarget, "api.go", 7, 6,
		[]string{"Store is generic"}})
}

func TestErrorGenericInterfaceNotChosen(t *testing.T) {
	expect(t, diagnose(t, "generic"), at{codegen.CodeBadTarget, "generic", 0, 0,
		[]string{"no interface of package generic has a //resilience: directive"}})
}

// A constraint interface, at its name.
func TestErrorConstraintInterface(t *testing.T) {
	expect(t, diagnose(t, "constraint"), at{codegen.CodeBadTarget, "api.go", 7, 6,
		[]string{"Getter is a constraint"}})
}

// A package without any directive.
func TestErrorNoDirectives(t *testing.T) {
	expect(t, diagnose(t, "no_directives"), at{codegen.CodeBadTarget, "no_directives", 0, 0,
		[]string{"no interface of package nodirectives has a //resilience: directive"}})
}

// notLoading writes, in a module of its own in a temporary directory, a package whose
// file is src, and generates it.
func notLoading(t *testing.T, src string) (string, codegen.Diagnostics) {
	t.Helper()
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/broken\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "api.go"), []byte(src), 0o644))
	res, err := codegen.Generate(codegen.Config{Dir: dir})
	assert.Nil(t, res)
	var ds codegen.Diagnostics
	require.ErrorAs(t, err, &ds)
	require.NotEmpty(t, ds)
	for _, d := range ds {
		assert.Equal(t, codegen.CodeBadTarget, d.Code, "%v", d)
	}
	assert.NoFileExists(t, filepath.Join(dir, codegen.DefaultOutput))
	return dir, ds
}

const (
	syntaxError = "package broken\n\nfunc F( {\n"
	typeError   = "package broken\n\nimport \"context\"\n\n// API is guarded.\ntype API interface {\n\t//resilience:timeout duration=1s\n\tGet(ctx context.Context) (Missing, error)\n}\n"
)

// A package that does not parse: each syntax error is reported once, at its position,
// not also as go list's report of the failed build ("# example.com/broken" and the same
// errors, at no position).
func TestErrorPackageDoesNotParse(t *testing.T) {
	_, ds := notLoading(t, syntaxError)
	expect(t, ds,
		at{codegen.CodeBadTarget, "api.go", 3, 9, []string{"expected ')', found '{'"}},
		at{codegen.CodeBadTarget, "api.go", 3, 11, []string{"expected ')', found 'EOF'"}},
		at{codegen.CodeBadTarget, "api.go", 3, 11, []string{"expected ';', found 'EOF'"}},
		at{codegen.CodeBadTarget, "api.go", 3, 11, []string{"missing ',' in parameter list"}},
	)
}

// A package that does not type-check in an interface to wrap: the type error is
// reported at its position, named by the interface.
func TestErrorPackageDoesNotTypeCheck(t *testing.T) {
	_, ds := notLoading(t, typeError)
	expect(t, ds, at{codegen.CodeBadTarget, "api.go", 8, 28, []string{"API: undefined: Missing"}})
}

// --- several errors (GN-6) ---

// Every error of a package is reported, in two files and two interfaces, two on one
// line and two at one position, sorted by file, line, column and code, though they are
// found in another order: Orders before Users (accounts.go), and in Orders, Get (line
// 17) before Put (line 12).
func TestErrorsAllReportedSorted(t *testing.T) {
	expect(t, diagnose(t, "several"),
		at{codegen.CodeUnknownDirective, "accounts.go", 7, 15, []string{"did you mean //resilience:timeout?"}},
		at{codegen.CodeNoFallback, "accounts.go", 10, 31, []string{`"missing"`}},
		at{r4c.BadDuration, "orders.go", 8, 40, []string{`retry.delay = "1x"`}},
		at{"R4C-HDG-001", "orders.go", 12, 15, []string{"Put:"}},
		at{"R4C-HDG-002", "orders.go", 12, 15, []string{"Put:"}},
		at{r4c.BadNumber, "orders.go", 17, 35, []string{`rateLimiter.permits = "ten"`}},
		at{r4c.BadDuration, "orders.go", 17, 46, []string{`rateLimiter.period = "1x"`}},
	)
}

// A directive on an embedded interface applies to nothing: it is an error, not dropped
// without a word (fault: it was ignored, and the generation succeeded).
func TestErrorDirectiveOnEmbeddedInterface(t *testing.T) {
	ds := diagnose(t, "directive_on_embedded")
	require.Len(t, ds, 1, "%v", ds)
	assert.Equal(t, "api.go", filepath.Base(ds[0].Pos.Filename))
	assert.Equal(t, 14, ds[0].Pos.Line)
	assert.Equal(t, 15, ds[0].Pos.Column)
	assert.Equal(t, codegen.CodeMalformed, ds[0].Code)
}

// --- //resilience:none (GN-3) ---

// none goes on a method, alone: on the interface, or beside another directive, it is
// malformed.
func TestErrorNoneMisused(t *testing.T) {
	expect(t, diagnose(t, "none_misused"),
		at{codegen.CodeMalformed, "api.go", 8, 14, []string{"//resilience:none goes on a method"}},
		at{codegen.CodeMalformed, "api.go", 10, 15, []string{"Get: //resilience:none stands alone"}})
}

// --- R4C-REG-008 at generation time (GN-6) ---

// Two directives that share a limiter by name and give its permits two values fail the
// generation, as they would fail the constructor; 1s and 1000ms are one period.
func TestErrorSharedNameConflict(t *testing.T) {
	expect(t, diagnose(t, "shared_conflict"),
		at{r4c.Conflict, "api.go", 10, 15, []string{`the rateLimiter "api" is declared at api.go:8 with permits 5, here with 10`}})
}

// --- What the generated code could not write (GN-4, GN-5) ---

// An embedded interface of another package with an unexported method: no type outside
// that package implements it (fault: generated, then did not compile).
func TestErrorForeignUnexportedMethod(t *testing.T) {
	expect(t, diagnose(t, "foreign_sealed"), at{codegen.CodeBadTarget, "api.go", 9, 6,
		[]string{"API embeds the unexported method sealed of package other"}})
}

// Methods whose types the generated file cannot name: an unexported type of another
// package, a type of an internal package it may not import (fault: generated, then did
// not compile).
func TestErrorForeignTypes(t *testing.T) {
	expect(t, diagnose(t, "foreign_types"),
		at{codegen.CodeBadTarget, "api.go", 9, 6, []string{"Get: its signature has the unexported type other.hidden"}},
		at{codegen.CodeBadTarget, "api.go", 9, 6, []string{"Put: its signature has a type of the internal package", "foreign/other/internal/x"}})
}

// Two interfaces whose generated code would declare one name (fault: generated, then
// NewAResilient redeclared).
func TestErrorGeneratedNamesClash(t *testing.T) {
	expect(t, diagnose(t, "name_clash"), at{codegen.CodeBadTarget, "api.go", 14, 6,
		[]string{"A's generated code and NewA's would both declare NewAResilient"}})
}

// Interfaces in files of different build constraints cannot share one file.
func TestErrorMixedBuildConstraints(t *testing.T) {
	expect(t, diagnose(t, "mixed_constraints"), at{codegen.CodeBadTarget, "b.go", 6, 6,
		[]string{`A and B are in files of different build constraints ("//go:build linux", "")`}})
}

// Directives on a group of types, after a method on its line, inside an interface after
// its last method, on a struct: each applies to nothing, and says so (fault: ignored
// without a word).
func TestErrorStrayDirectives(t *testing.T) {
	stray := "this directive applies to nothing"
	expect(t, diagnose(t, "stray"),
		at{codegen.CodeBadTarget, "stray", 0, 0, []string{"no interface of package stray has a //resilience: directive"}},
		at{codegen.CodeMalformed, "api.go", 6, 1, []string{stray}},
		at{codegen.CodeMalformed, "api.go", 14, 44, []string{stray}},
		at{codegen.CodeMalformed, "api.go", 15, 3, []string{stray}},
		at{codegen.CodeMalformed, "api.go", 21, 1, []string{stray}})
}

// GN-5: a stale generated file never stops its regeneration, whatever it holds: nothing,
// another package name, merge conflict markers (fault: each failed to load).
func TestStaleOutputRegenerates(t *testing.T) {
	dir := filepath.Join("testdata", "bad", "stale")
	out := filepath.Join(dir, codegen.DefaultOutput)
	t.Cleanup(func() { _ = os.Remove(out) })
	other := filepath.Join(dir, "other_gen.go")
	t.Cleanup(func() { _ = os.Remove(other) })
	// Another file this command generated, half merged, is read as its package clause
	// too (fault: it stopped the package from loading); a_tool.go, which the build
	// leaves out, does not give its package name (fault: the stale file became package
	// main).
	require.NoError(t, os.WriteFile(other, []byte("// Code generated by resilience4go-gen; DO NOT EDIT.\n\npackage stale\n\n<<<<<<< HEAD\n"), 0o644))
	for name, stale := range map[string]string{
		"empty":    "",
		"renamed":  "// Code generated by resilience4go-gen; DO NOT EDIT.\n\npackage oldname\n",
		"conflict": "<<<<<<< HEAD\n// Code generated by resilience4go-gen; DO NOT EDIT.\n=======\n>>>>>>> other\n",
		"crlf":     "// Code generated by resilience4go-gen; DO NOT EDIT.\r\n\r\npackage stale\r\n",
	} {
		require.NoError(t, os.WriteFile(out, []byte(stale), 0o644))
		res, err := codegen.Generate(codegen.Config{Dir: dir})
		require.NoError(t, err, name)
		assert.Contains(t, string(res.Source), "\npackage stale\n", name)
		assert.Contains(t, string(res.Source), "func NewAPIResilient(", name)
	}
}

// An instance is one layer and one id: a name, or the Type.Method id of a method without
// one, so a name that is another method's id shares its instance (fault: not compared,
// and the constructor failed). Directives with config= are left to the constructor, as
// their configurations may make them agree.
func TestErrorSharedIDConflict(t *testing.T) {
	expect(t, diagnose(t, "shared_by_id"),
		at{r4c.Conflict, "api.go", 11, 15, []string{`the rateLimiter "API.Get" is declared at api.go:9 with permits 10, here with 5`}})
}

// Directives that guard nothing: an interface's that applies to none of its methods, a
// none with no interface directive to leave off.
func TestErrorGuardsNothing(t *testing.T) {
	expect(t, diagnose(t, "guards_nothing"),
		at{codegen.CodeMalformed, "api.go", 11, 14, []string{"Empty's directives apply to none of its methods"}},
		at{codegen.CodeMalformed, "api.go", 18, 15, []string{"Get: //resilience:none leaves nothing off"}})
}

// Error lists by import path name only packages this one may import (fault: generated
// code with an import cycle, an internal or vendored package, a program, or a pattern
// that go list expanded).
func TestErrorListPathsNotImportable(t *testing.T) {
	why := "is neither a package the file imports nor the path of a package this one may import"
	expect(t, diagnose(t, "errors_paths"),
		at{codegen.CodeUnknownError, "api.go", 9, 29, []string{why}},
		at{codegen.CodeUnknownError, "api.go", 11, 29, []string{`"internal/poll" ` + why}},
		at{codegen.CodeUnknownError, "api.go", 13, 29, []string{`"vendor/golang.org/x/net/http2/hpack" ` + why}},
		at{codegen.CodeUnknownError, "api.go", 15, 29, []string{"examples/codegen\" " + why}},
		at{codegen.CodeUnknownError, "api.go", 17, 29, []string{`"std" ` + why}})
}

// A count above what a 32-bit int holds (fault: generated code that does not compile for
// GOARCH=386).
func TestErrorIntAbove32Bits(t *testing.T) {
	expect(t, diagnose(t, "bigint"), at{r4c.OutOfRange, "api.go", 8, 38,
		[]string{`maxConcurrent = "3000000000": out of range`}})
}

// An interface's directive that no method takes, because each guardable method leaves it
// off or has its own, applies to nothing (fault: accepted, and the wrapper wrapped
// nothing).
func TestErrorUnusedInterfaceDirective(t *testing.T) {
	expect(t, diagnose(t, "unused_interface_directive"),
		at{codegen.CodeMalformed, "api.go", 11, 14, []string{"Closer's timeout directive applies to none of its methods"}},
		at{codegen.CodeMalformed, "api.go", 22, 14, []string{"Store's retry directive applies to none of its methods"}})
}
