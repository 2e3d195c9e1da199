package codegen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of the directive parser (GN-1): names, attributes, quoted values, the
// positions of each, and every malformed form.

// base is where the directives of the tests start: the "//" of a comment after a tab.
var base = token.Position{Filename: "api.go", Offset: 100, Line: 8, Column: 2}

// off returns the position off bytes into a directive at base.
func off(n int) token.Position {
	p := base
	p.Offset += n
	p.Column += n
	return p
}

// wantAttr is an attribute a directive must have, with the offsets of its key and value
// in the directive's text.
type wantAttr struct {
	key, value     string
	keyOff, valOff int
}

// wantDiag is a diagnostic the parser must report, at an offset in the directive's text.
type wantDiag struct {
	code string
	off  int
	says string
}

var directiveCases = []struct {
	name  string
	text  string
	dname string // "" when the parser returns nil
	attrs []wantAttr
	diags []wantDiag
}{
	{name: "name only", text: "//resilience:ratelimiter", dname: "ratelimiter"},
	{name: "name and trailing space", text: "//resilience:timeout \t ", dname: "timeout"},
	{name: "name in any case", text: "//resilience:RateLimiter Permits=1", dname: "RateLimiter",
		attrs: []wantAttr{{"Permits", "1", 25, 33}}},
	{name: "attributes", text: "//resilience:ratelimiter permits=10 period=1s", dname: "ratelimiter",
		attrs: []wantAttr{{"permits", "10", 25, 33}, {"period", "1s", 36, 43}}},
	{name: "tabs and runs of spaces", text: "//resilience:retry\tmaxAttempts=3   delay=100ms\t", dname: "retry",
		attrs: []wantAttr{{"maxAttempts", "3", 19, 31}, {"delay", "100ms", 35, 41}}},
	{name: "quoted value", text: `//resilience:ratelimiter name="geo coding" permits=5`, dname: "ratelimiter",
		attrs: []wantAttr{{"name", "geo coding", 25, 30}, {"permits", "5", 43, 51}}},
	{name: "quoted value with escapes", text: `//resilience:bulkhead name="a\"b\tc" maxConcurrent=2`, dname: "bulkhead",
		attrs: []wantAttr{{"name", "a\"b\tc", 22, 27}, {"maxConcurrent", "2", 37, 51}}},
	{name: "quoted value last", text: `//resilience:bulkhead name="x y"`, dname: "bulkhead",
		attrs: []wantAttr{{"name", "x y", 22, 27}}},
	{name: "value with an equals sign", text: "//resilience:fallback method=a=b", dname: "fallback",
		attrs: []wantAttr{{"method", "a=b", 22, 29}}},
	{name: "value with a quote inside", text: `//resilience:fallback method=a"b`, dname: "fallback",
		attrs: []wantAttr{{"method", `a"b`, 22, 29}}},
	{name: "columns count bytes", text: "//resilience:ratelimiter name=é permits=1", dname: "ratelimiter",
		attrs: []wantAttr{{"name", "é", 25, 30}, {"permits", "1", 33, 41}}},

	// R4C-GEN-001: no name.
	{name: "prefix only", text: "//resilience:",
		diags: []wantDiag{{CodeUnknownDirective, 0, "names its policy"}}},
	{name: "space after the prefix", text: "//resilience: permits=10",
		diags: []wantDiag{{CodeUnknownDirective, 0, "names its policy"}}},

	// R4C-GEN-003: malformed attributes, each left out, the others kept.
	{name: "attribute without equals", text: "//resilience:retry maxAttempts delay=1s", dname: "retry",
		attrs: []wantAttr{{"delay", "1s", 31, 37}},
		diags: []wantDiag{{CodeMalformed, 19, "retry maxAttempts: an attribute is written key=value"}}},
	{name: "attribute without equals last", text: "//resilience:retry delay=1s maxAttempts", dname: "retry",
		attrs: []wantAttr{{"delay", "1s", 19, 25}},
		diags: []wantDiag{{CodeMalformed, 28, "retry maxAttempts: an attribute is written key=value"}}},
	{name: "value without key", text: "//resilience:retry =3 delay=1s", dname: "retry",
		attrs: []wantAttr{{"delay", "1s", 22, 28}},
		diags: []wantDiag{{CodeMalformed, 19, `retry: an attribute has no name before its "="`}}},
	{name: "equals alone", text: "//resilience:retry =", dname: "retry",
		diags: []wantDiag{
			{CodeMalformed, 19, `retry: an attribute has no name before its "="`},
			{CodeMalformed, 19, "the value is empty"},
		}},
	{name: "empty value last", text: "//resilience:retry delay=", dname: "retry",
		diags: []wantDiag{{CodeMalformed, 19, "retry delay: the value is empty"}}},
	{name: "empty value before another", text: "//resilience:retry delay= maxAttempts=3", dname: "retry",
		attrs: []wantAttr{{"maxAttempts", "3", 26, 38}},
		diags: []wantDiag{{CodeMalformed, 19, "retry delay: the value is empty"}}},
	{name: "quote not closed", text: `//resilience:ratelimiter permits=5 name="geo coding`, dname: "ratelimiter",
		attrs: []wantAttr{{"permits", "5", 25, 33}},
		diags: []wantDiag{{CodeMalformed, 40, "ratelimiter name: the quoted value is not closed or not a Go string"}}},
	{name: "quote with a bad escape", text: `//resilience:ratelimiter name="a\qb" permits=5`, dname: "ratelimiter",
		diags: []wantDiag{{CodeMalformed, 30, "not closed or not a Go string"}}},
	{name: "no space after the quote", text: `//resilience:ratelimiter name="geo"coding permits=5`, dname: "ratelimiter",
		attrs: []wantAttr{{"permits", "5", 42, 50}},
		diags: []wantDiag{{CodeMalformed, 35, "ratelimiter name: a space must follow the quoted value"}}},
	{name: "attribute twice", text: "//resilience:retry maxAttempts=3 maxAttempts=4", dname: "retry",
		attrs: []wantAttr{{"maxAttempts", "3", 19, 31}},
		diags: []wantDiag{{CodeMalformed, 33, "retry maxAttempts: the attribute is given twice"}}},
	{name: "attribute twice, once quoted", text: `//resilience:bulkhead name="x" name=y`, dname: "bulkhead",
		attrs: []wantAttr{{"name", "x", 22, 27}},
		diags: []wantDiag{{CodeMalformed, 31, "bulkhead name: the attribute is given twice"}}},
	{name: "every malformed form at once", text: `//resilience:retry a =1 b= c="x d="y"z e=1 e=2`, dname: "retry",
		attrs: []wantAttr{{"e", "1", 39, 41}},
		diags: []wantDiag{
			{CodeMalformed, 19, "retry a: an attribute is written key=value"},
			{CodeMalformed, 21, `retry: an attribute has no name before its "="`},
			{CodeMalformed, 24, "retry b: the value is empty"},
			{CodeMalformed, 35, "retry c: a space must follow the quoted value"},
			{CodeMalformed, 43, "retry e: the attribute is given twice"},
		}},
}

func TestParseDirective(t *testing.T) {
	for _, c := range directiveCases {
		t.Run(c.name, func(t *testing.T) {
			var ds diags
			d := parseDirective(c.text, base, &ds)
			require.Len(t, ds.list, len(c.diags), "diagnostics: %v", ds.list)
			for i, w := range c.diags {
				assert.Equal(t, w.code, ds.list[i].Code, "%v", ds.list[i])
				assert.Equal(t, off(w.off), ds.list[i].Pos, "%v", ds.list[i])
				assert.Contains(t, ds.list[i].Message, w.says)
			}
			if c.dname == "" {
				assert.Nil(t, d)
				return
			}
			require.NotNil(t, d)
			assert.Equal(t, c.dname, d.name)
			assert.Equal(t, off(len(prefix)), d.pos, "the name's position")
			got := make([]wantAttr, len(d.attrs))
			for i, a := range d.attrs {
				got[i] = wantAttr{a.key, a.value, a.pos.Offset - base.Offset, a.valuePos.Offset - base.Offset}
				assert.Equal(t, off(got[i].keyOff), a.pos, "%s: the key's line and column", a.key)
				assert.Equal(t, off(got[i].valOff), a.valuePos, "%s: the value's line and column", a.key)
			}
			if len(c.attrs) == 0 {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, c.attrs, got)
			}
		})
	}
}

// An empty value is malformed, written empty or as "" (R4C-GEN-003 covers "empty").
func TestParseDirectiveEmptyQuotedValue(t *testing.T) {
	var ds diags
	d := parseDirective(`//resilience:ratelimiter name="" permits=5`, base, &ds)
	require.NotNil(t, d)
	require.Len(t, ds.list, 1, "%v", ds.list)
	assert.Equal(t, CodeMalformed, ds.list[0].Code)
	assert.Equal(t, off(30), ds.list[0].Pos)
	_, has := d.attr("name")
	assert.False(t, has)
}

// directives finds the directives of a doc comment among its other lines, at their
// positions in the file.
func TestDirectivesOfDocComment(t *testing.T) {
	const src = `package p

// API is guarded.
//
//resilience:ratelimiter permits=10 period=1s
// resilience:retry maxAttempts=3 has a space after the slashes: an error, not a directive.
// resilience: prose that speaks of resilience is neither.
/* //resilience:timeout duration=1s is in a block comment. */
//resilience:bulkhead name="two words" maxConcurrent
type API interface{}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "api.go", src, parser.ParseComments)
	require.NoError(t, err)
	doc := f.Decls[0].(*ast.GenDecl).Doc
	require.NotNil(t, doc)
	var ds diags
	got := directives(fset, doc, &ds)
	require.Len(t, got, 2)
	assert.Equal(t, "ratelimiter", got[0].name)
	assert.Equal(t, token.Position{Filename: "api.go", Offset: 46, Line: 5, Column: 14}, got[0].pos)
	require.Len(t, got[0].attrs, 2)
	assert.Equal(t, token.Position{Filename: "api.go", Offset: 66, Line: 5, Column: 34}, got[0].attrs[0].valuePos)
	assert.Equal(t, "bulkhead", got[1].name)
	require.Len(t, got[1].attrs, 1)
	assert.Equal(t, "two words", got[1].attrs[0].value)
	require.Len(t, ds.list, 2, "%v", ds.list)
	assert.Equal(t, CodeUnknownDirective, ds.list[0].Code)
	assert.Equal(t, 6, ds.list[0].Pos.Line)
	assert.Equal(t, 1, ds.list[0].Pos.Column)
	assert.Contains(t, ds.list[0].Message, "write //resilience:retry maxAttempts=3")
	assert.Equal(t, CodeMalformed, ds.list[1].Code)
	assert.Equal(t, 9, ds.list[1].Pos.Line)
	assert.Equal(t, 40, ds.list[1].Pos.Column)
	assert.Nil(t, directives(fset, nil, &ds))
}

// FuzzParseDirective: whatever follows the prefix, the parser does not panic (and does
// not hang: its work is linear in the text), and what it returns is consistent with the
// text: a name right after the prefix, each attribute's key and value where its
// positions say, keys once each, in order, and every diagnostic within the text.
func FuzzParseDirective(f *testing.F) {
	for _, c := range directiveCases {
		f.Add(strings.TrimPrefix(c.text, prefix))
	}
	for _, s := range []string{
		"", " ", "\t", "=", "==", "a==b", `a=""`, `a="`, `a="\"`, `a="\x"`, "a=`b c`",
		`a="b" c="d"e f`, "hedge delay=50ms maxAttempts=3 budgetPercent=20", "\x00=\xff",
		"ratelimiter name=\"geo\\u00e9\" permits=5", "x a=1 a=2 a=3 =4 b", "x\na=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		text := prefix + rest
		var ds diags
		d := parseDirective(text, base, &ds)
		for _, g := range ds.list {
			require.Contains(t, []string{CodeUnknownDirective, CodeMalformed}, g.Code)
			o := g.Pos.Offset - base.Offset
			require.True(t, o >= 0 && o <= len(text), "diagnostic %v outside %q", g, text)
			require.Equal(t, off(o), g.Pos, "the column moves with the offset")
			require.NotEmpty(t, g.Message)
		}
		if d == nil {
			require.True(t, rest == "" || rest[0] == ' ' || rest[0] == '\t', "no name in %q", text)
			require.Len(t, ds.list, 1)
			require.Equal(t, CodeUnknownDirective, ds.list[0].Code)
			return
		}
		require.NotEmpty(t, d.name)
		require.True(t, strings.HasPrefix(rest, d.name), "the name %q starts %q", d.name, rest)
		require.NotContains(t, d.name, " ")
		require.NotContains(t, d.name, "\t")
		require.Equal(t, off(len(prefix)), d.pos)
		seen := map[string]bool{}
		last := len(prefix) + len(d.name)
		for _, a := range d.attrs {
			require.NotEmpty(t, a.key)
			require.False(t, seen[a.key], "key %q twice in %q", a.key, text)
			seen[a.key] = true
			k := a.pos.Offset - base.Offset
			v := a.valuePos.Offset - base.Offset
			require.Greater(t, k, last, "attributes in order in %q", text)
			require.Equal(t, off(k), a.pos)
			require.Equal(t, off(v), a.valuePos)
			require.Equal(t, k+len(a.key)+1, v, "the value follows key=")
			require.True(t, strings.HasPrefix(text[k:], a.key+"="), "key %q at %d of %q", a.key, k, text)
			require.NotContains(t, a.key, " ")
			require.NotContains(t, a.key, "\t")
			require.Less(t, v, len(text), "value of %q within %q", a.key, text)
			if text[v] == '"' {
				// An empty quoted value is let through for now: see
				// TestParseDirectiveEmptyQuotedValue.
				q, err := strconv.QuotedPrefix(text[v:])
				require.NoError(t, err)
				u, err := strconv.Unquote(q)
				require.NoError(t, err)
				require.Equal(t, u, a.value)
				last = v + len(q)
			} else {
				require.NotEmpty(t, a.value, "value of %q in %q", a.key, text)
				require.True(t, strings.HasPrefix(text[v:], a.value))
				require.NotContains(t, a.value, " ")
				require.NotContains(t, a.value, "\t")
				last = v + len(a.value)
			}
			require.True(t, last == len(text) || text[last] == ' ' || text[last] == '\t', "a space or the end follows %q's value in %q", a.key, text)
		}
	})
}

// A go list position is read from the right, so a Windows file name keeps its drive's
// colon (fault: split at the first colon, the file was "C" and the line 0); a relative
// name is made absolute.
func TestPosition(t *testing.T) {
	dir := filepath.Join(string(filepath.Separator), "w")
	win := position(`C:\w\api.go:3:4`, `C:\w`) // absolute on Windows only
	assert.True(t, strings.HasSuffix(win.Filename, `C:\w\api.go`), win.Filename)
	assert.Equal(t, [2]int{3, 4}, [2]int{win.Line, win.Column})
	assert.Equal(t, token.Position{Filename: filepath.Join(dir, "api.go"), Line: 3, Column: 4}, position("api.go:3:4", dir))
	assert.Equal(t, token.Position{Filename: filepath.Join(dir, "api.go"), Line: 7}, position("api.go:7", dir))
	assert.Equal(t, token.Position{Filename: dir}, position("-", dir), "the package as a whole")
	assert.Equal(t, token.Position{Filename: dir}, position("", dir))
}
