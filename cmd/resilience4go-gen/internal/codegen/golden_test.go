package codegen_test

import (
	"bufio"
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"

	"github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen"
)

// The golden tests (GN-4, GN-5): every package of golden/ is generated as the line
// "//go:generate go run …/cmd/resilience4go-gen [flags]" of its files says, and the
// result is compared byte for byte with the committed file.
// go test ./internal/codegen -run TestGolden -update rewrites the committed files.

var update = flag.Bool("update", false, "rewrite the golden files")

// generatedHeader is go's convention for the first line of a generated file
// (go help generate).
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// goldenCommand starts the go:generate line of a golden package.
const goldenCommand = "//go:generate go run github.com/resilience4go/resilience4go/cmd/resilience4go-gen"

// goldenDirs returns the golden packages: the directories of golden/, but testdata.
func goldenDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("golden")
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, filepath.Join("golden", e.Name()))
		}
	}
	require.GreaterOrEqual(t, len(dirs), 2, "golden packages: %v", dirs)
	return dirs
}

// goldenConfig returns the configuration the go:generate line of the package in dir runs
// the command with: its -type and -output flags. The package has exactly one such line.
func goldenConfig(t *testing.T, dir string) codegen.Config {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var lines []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(src))
		for sc.Scan() {
			if l := sc.Text(); l == goldenCommand || strings.HasPrefix(l, goldenCommand+" ") {
				lines = append(lines, l)
			}
		}
	}
	require.Len(t, lines, 1, "the go:generate lines of %s", dir)
	fs := flag.NewFlagSet("resilience4go-gen", flag.ContinueOnError)
	types := fs.String("type", "", "")
	output := fs.String("output", "", "")
	require.NoError(t, fs.Parse(strings.Fields(strings.TrimPrefix(lines[0], goldenCommand))))
	require.Zero(t, fs.NArg(), "go generate runs the command in the package's directory")
	cfg := codegen.Config{Dir: dir, Output: *output}
	if *types != "" {
		cfg.Types = strings.Split(*types, ",")
	}
	return cfg
}

// goldenRun is one generation of a golden package, made once for the tests that read it.
type goldenRun struct {
	once sync.Once
	cfg  codegen.Config
	res  *codegen.Result
	err  error
}

var goldenRuns sync.Map // dir → *goldenRun

// generateGolden returns the generation of the golden package in dir.
func generateGolden(t *testing.T, dir string) (codegen.Config, *codegen.Result) {
	t.Helper()
	v, _ := goldenRuns.LoadOrStore(dir, &goldenRun{})
	run := v.(*goldenRun)
	run.once.Do(func() {
		run.cfg = goldenConfig(t, dir)
		run.res, run.err = codegen.Generate(run.cfg)
	})
	require.NoError(t, run.err, "generating %s", dir)
	require.NotNil(t, run.res)
	return run.cfg, run.res
}

// SPEC GN-4, GN-5: the generated file of each golden package is the committed one, byte for
// byte, at the path its go:generate line gives.
func TestGolden(t *testing.T) {
	for _, dir := range goldenDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			cfg, res := generateGolden(t, dir)
			abs, err := filepath.Abs(dir)
			require.NoError(t, err)
			want := filepath.Join(abs, cmp.Or(cfg.Output, codegen.DefaultOutput))
			assert.Equal(t, want, res.Path, "the generated file's path")
			if *update {
				require.NoError(t, os.WriteFile(res.Path, res.Source, 0o644))
				return
			}
			committed, err := os.ReadFile(res.Path)
			require.NoError(t, err, "the golden file; go test ./internal/codegen -run TestGolden -update writes it")
			assert.Equal(t, string(committed), string(res.Source),
				"%s is not what the generator writes; go test ./internal/codegen -run TestGolden -update rewrites it", res.Path)
		})
	}
}

// SPEC GN-5: generating a package twice gives the same bytes. The committed files, written by
// go generate in another process, show it across processes; this shows it within one,
// for the packages whose output depends on the most choices (every policy; imports
// renamed, two files): a load costs a second or more, so not for every package.
func TestGolden_Deterministic(t *testing.T) {
	for _, dir := range []string{filepath.Join("golden", "shapes"), filepath.Join("golden", "aliases")} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			cfg, first := generateGolden(t, dir)
			again, err := codegen.Generate(cfg)
			require.NoError(t, err)
			assert.Equal(t, string(first.Source), string(again.Source), "a second generation of %s", dir)
			assert.Equal(t, first.Path, again.Path)
		})
	}
}

// SPEC GN-5: the generated file is gofmt-formatted, and its first line is go's mark of a
// generated file, which tools (golint, go vet's copy checks, code review) recognize.
func TestGolden_FormattedWithHeader(t *testing.T) {
	for _, dir := range goldenDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			_, res := generateGolden(t, dir)
			formatted, err := format.Source(res.Source)
			require.NoError(t, err)
			assert.Equal(t, string(formatted), string(res.Source), "gofmt changes nothing")
			first, _, _ := strings.Cut(string(res.Source), "\n")
			assert.Regexp(t, generatedHeader, first)
			assert.Equal(t, "// Code generated by resilience4go-gen; DO NOT EDIT.", first)
		})
	}
}

// The generated file type-checks with the package it is generated into (GN-4). The
// packages of golden/testdata are the generator's corner cases, whose generated code did
// not compile: an interface-level directive that applies to no method, or that every
// method replaces, left its imports in the file; argument structs of two interfaces, or
// of an interface and the package, had one name; a package-level type named like a
// variable of the constructor was hidden by it; an interface name that starts with a
// letter outside ASCII was cut in the middle of its first rune.
func TestGolden_OutputTypeChecks(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("golden", "testdata", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	declares := map[string][]string{
		"unicode_names": {"func NewÜberweisungResilient(", "func newÖlpreisResilient("},
		// GN-3: aliases of context.Context, of a future and of error are those types
		// (fault: a method with an aliased context passed through, without its policies).
		"alias_types": {"callPut ", "callCount ", "callGet ", "resilience.Fallback(cached)"},
		// GN-5: the file's build line, with its name's suffix (fault: none, so the file
		// did not compile where the interface does not exist).
		"build_suffix": {"\n//go:build (amd64 || arm64) && linux\n\npackage buildsuffix\n"},
		// GN-3: a method's directives follow it into the interfaces that embed it (fault:
		// dropped).
		"embedded_local": {"resilience.Wrap1(reg, \"Outer.Get\", impl.Get,\n\t\tresilience.Retry(retry.MaxAttempts(2)),"},
		// The doc lists the layers in the order they compose (fault: the default order,
		// and "through its ," for an order alone).
		// GN-5: the constraint of the file that declares the fallback and the error
		// (fault: none, so the file did not compile where they do not exist).
		"crossfile": {"\n//go:build linux\n\npackage crossfile\n"},
		// GN-3: through an alias and a generic instance (fault: dropped).
		"embed_instances": {"resilience.Retry(retry.MaxAttempts(5)),", "resilience.Retry(retry.MaxAttempts(4)),"},
		// Without -type, an interface whose embedded methods have directives is wrapped
		// (fault: only with -type, and a package whose only directives were a generic
		// interface's had "no interface with a directive").
		"embed_auto":   {"func NewAResilient(", "func NewBaseResilient(", "func NewCResilient(", "retry.MaxAttempts(3)"},
		"chosen_order": {"through its timeout and retry, outermost first", "through a composition of no policy"},
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			res, err := codegen.Generate(codegen.Config{Dir: dir})
			require.NoError(t, err)
			assert.Empty(t, typeCheck(t, dir, res), "the generated file of %s type-checks:\n%s", dir, res.Source)
			for _, s := range declares[filepath.Base(dir)] {
				assert.Contains(t, string(res.Source), s)
			}
		})
	}
}

// The type check finds what the compiler would: a generated file with an unused import
// does not pass it.
func TestGolden_TypeCheckFindsErrors(t *testing.T) {
	dir := filepath.Join("golden", "testdata", "args_type_clash")
	res, err := codegen.Generate(codegen.Config{Dir: dir})
	require.NoError(t, err)
	src := strings.Replace(string(res.Source), "import (", "import (\n\t\"io\"", 1)
	errs := typeCheck(t, dir, &codegen.Result{Path: res.Path, Source: []byte(src)})
	require.Len(t, errs, 1, "%v", errs)
	assert.Contains(t, errs[0].Error(), `"io" imported and not used`)
}

// typeCheck type-checks the package in dir with the generated file res in place (no
// file is written) and returns its errors. Its imports are loaded from their export
// data, as the compiler reads them.
func typeCheck(t *testing.T, dir string, res *codegen.Result) []error {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	paths := map[string]bool{}
	add := func(name string, src any) {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			require.NoError(t, err)
			paths[p] = true
		}
	}
	for _, name := range names {
		if abs, _ := filepath.Abs(name); abs != res.Path && !strings.HasSuffix(name, "_test.go") {
			add(name, nil)
		}
	}
	add(res.Path, res.Source)
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, slices.Sorted(maps.Keys(paths))...)
	require.NoError(t, err)
	imported := map[string]*types.Package{}
	for _, p := range pkgs {
		require.Empty(t, p.Errors, "loading %s", p.PkgPath)
		imported[p.PkgPath] = p.Types
	}
	var errs []error
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if p, ok := imported[path]; ok {
				return p, nil
			}
			return nil, fmt.Errorf("%s is not imported", path)
		}),
		Error: func(err error) { errs = append(errs, err) },
	}
	_, _ = conf.Check(files[0].Name.Name, fset, files, nil)
	return errs
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
