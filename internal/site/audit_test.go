package site

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Languages whose blocks must come from a tested file: Go code, and configuration.
var (
	goLangs     = map[string]bool{"go": true, "golang": true}
	configLangs = map[string]bool{"yaml": true, "yml": true, "properties": true}
)

var (
	fenceRE     = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z0-9_+.-]*)")
	announceRE  = regexp.MustCompile(`^<!-- file: (\S+)(?: region: (\S+))? -->\s*$`)
	shortcodeRE = regexp.MustCompile(`\{\{<\s*code\s+([^>]*)>\}\}`)
	argRE       = regexp.MustCompile(`(\w+)="([^"]*)"`)
	highlightRE = regexp.MustCompile(`\{\{<\s*highlight\s+(\w+)`)
)

// A code block of README.md or of the site that shows Go code or configuration must show
// a file under examples/ that is tested: a Go file of a directory with tests (which
// compile and run it), a configuration file that a Go file of a tested directory reads
// by name. In README.md such a block is announced by <!-- file: PATH --> (whose copy
// internal/readme checks); on the site it is a {{< code file="PATH" >}} shortcode, and a
// raw ```go, ```yaml or ```properties fence, or a highlight shortcode, is not allowed.
// The test lists every block that breaks this: there must be none.
func TestCodeBlocksComeFromTestedExamples(t *testing.T) {
	var bad []string
	bad = append(bad, auditReadme(t)...)
	bad = append(bad, auditContent(t)...)
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// auditReadme checks README.md's fenced blocks.
func auditReadme(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	lines := strings.Split(string(b), "\n")
	prev := "" // the last non-blank line before the current fence
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.TrimSpace(lines[i]) != "" {
				prev = lines[i]
			}
			continue
		}
		lang := strings.ToLower(m[2])
		if goLangs[lang] || configLangs[lang] {
			where := "README.md:" + strconv.Itoa(i+1)
			a := announceRE.FindStringSubmatch(strings.TrimSpace(prev))
			if a == nil {
				bad = append(bad, where+": a ```"+lang+" block with no <!-- file: examples/… --> before it")
			} else if msg := checkSource(a[1], configLangs[lang]); msg != "" {
				bad = append(bad, where+": "+msg)
			}
		}
		i = closeFence(lines, i, m[1])
		prev = ""
	}
	return bad
}

// auditContent checks every page under docs/content.
func auditContent(t *testing.T) []string {
	var bad []string
	dir := filepath.Join(root, "docs", "content")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			where := rel + ":" + strconv.Itoa(i+1)
			if m := fenceRE.FindStringSubmatch(lines[i]); m != nil {
				if lang := strings.ToLower(m[2]); goLangs[lang] || configLangs[lang] {
					bad = append(bad, where+": a raw ```"+lang+" block: show a file under examples/ with {{< code file=… >}}")
				}
				i = closeFence(lines, i, m[1])
				continue
			}
			if m := highlightRE.FindStringSubmatch(lines[i]); m != nil {
				if lang := strings.ToLower(m[1]); goLangs[lang] || configLangs[lang] {
					bad = append(bad, where+": a highlight shortcode of "+lang+": show a file under examples/ with {{< code file=… >}}")
				}
			}
			for _, sc := range shortcodeRE.FindAllStringSubmatch(lines[i], -1) {
				args := map[string]string{}
				for _, a := range argRE.FindAllStringSubmatch(sc[1], -1) {
					args[a[1]] = a[2]
				}
				file := args["file"]
				ext := strings.TrimPrefix(path.Ext(file), ".")
				config := configLangs[ext] || configLangs[args["lang"]]
				if msg := checkSource(file, config); msg != "" {
					bad = append(bad, where+": "+msg)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// closeFence returns the index of the line that closes the fence opened at line i with
// marker (the last line when none does).
func closeFence(lines []string, i int, marker string) int {
	for j := i + 1; j < len(lines); j++ {
		if strings.HasPrefix(strings.TrimSpace(lines[j]), marker) && strings.Trim(strings.TrimSpace(lines[j]), marker[:1]) == "" {
			return j
		}
	}
	return len(lines) - 1
}

// checkSource returns why file (a module path) is not a tested source of a block: not
// under examples/, missing, in a directory without tests, or (config) read by no Go file
// of a tested directory under examples/; "" when it is one.
func checkSource(file string, config bool) string {
	if !strings.HasPrefix(file, "examples/") {
		return file + " is not under examples/"
	}
	full := filepath.Join(root, filepath.FromSlash(file))
	if _, err := os.Stat(full); err != nil {
		return file + " does not exist"
	}
	if !config {
		if !hasTests(filepath.Dir(full)) {
			return file + " is in a directory with no test"
		}
		return ""
	}
	base := path.Base(file)
	loaded := false
	_ = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || loaded || d.IsDir() || !strings.HasSuffix(p, ".go") || !hasTests(filepath.Dir(p)) {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), base) {
			loaded = true
		}
		return nil
	})
	if !loaded {
		return file + ": no Go file of a tested example reads it"
	}
	return ""
}

// hasTests reports whether dir holds a _test.go file.
func hasTests(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	return len(m) > 0
}
