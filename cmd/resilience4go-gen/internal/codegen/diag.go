package codegen

import (
	"fmt"
	"go/token"
	"slices"
	"strings"
)

// The codes of the errors only the generator reports. A value of the wrong syntax or out
// of range carries the runtime's code instead (R4C-ATR-001 … R4C-ATR-008, R4C-REG-001), as
// do an order that names a layer twice or an unknown one (R4C-REG-011), a hedge on a
// synchronous method (R4C-HDG-001) and a hedge beside a retry (R4C-HDG-002).
const (
	CodeUnknownDirective = "R4C-GEN-001" // a //resilience: directive that names no policy
	CodeUnknownAttribute = "R4C-GEN-002" // an attribute the directive does not have
	CodeMalformed        = "R4C-GEN-003" // an attribute without "=", given twice, empty, or a directive given twice
	CodeMethodShape      = "R4C-GEN-004" // a guarded method without context.Context first or error last
	CodeNoFallback       = "R4C-GEN-005" // a fallback method that does not exist, or no method= at all
	CodeFallbackType     = "R4C-GEN-006" // a fallback method whose signature does not fit
	CodeUnknownError     = "R4C-GEN-007" // an error named in abortOn, retryOn, … that is not an error variable
	CodeBadTarget        = "R4C-GEN-008" // no such interface, a generic one, or a package that does not load
)

// Diagnostic is one error found while generating: where, its code and what is wrong.
type Diagnostic struct {
	Pos     token.Position // the directive's attribute, the directive, or the method
	Code    string         // e.g. "R4C-ATR-001" or "R4C-GEN-002"
	Message string         // what is wrong, in words
}

// String returns the diagnostic as go vet prints one: "file:line:col: CODE: message".
func (d Diagnostic) String() string {
	pos := d.Pos.String()
	if !d.Pos.IsValid() && d.Pos.Filename == "" {
		pos = "-"
	}
	return fmt.Sprintf("%s: %s: %s", pos, d.Code, d.Message)
}

// Diagnostics is every error of one run, sorted by position. As an error, it is each
// diagnostic on a line of its own.
type Diagnostics []Diagnostic

// Error implements error.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// sorted returns ds sorted by file, line and column, then code, without duplicates.
func (ds Diagnostics) sorted() Diagnostics {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		if c := strings.Compare(a.Pos.Filename, b.Pos.Filename); c != 0 {
			return c
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		if a.Pos.Column != b.Pos.Column {
			return a.Pos.Column - b.Pos.Column
		}
		return strings.Compare(a.Code, b.Code)
	})
	return slices.Compact(out)
}

// diags collects diagnostics.
type diags struct{ list Diagnostics }

func (d *diags) add(pos token.Position, code, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Code: code, Message: fmt.Sprintf(format, args...)})
}
