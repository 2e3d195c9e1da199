package site

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if built.dir != "" {
			_ = os.RemoveAll(built.dir)
		}
		os.Exit(code)
	}))
}

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// requireTools is the environment variable that makes a missing hugo or chromium a
// failure rather than a skip.
const requireTools = "DOCS_SITE_TOOLS"

// tool returns the path of the binary name (looked up on PATH, or at fallback when it is
// an absolute path); when there is none it skips the test with the reason, or fails it
// under DOCS_SITE_TOOLS=require.
func tool(t *testing.T, name, fallback, install string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if fallback != "" {
		if _, err := os.Stat(fallback); err == nil {
			return fallback
		}
	}
	if os.Getenv(requireTools) == "require" {
		t.Fatalf("%s is not installed and %s=require (%s)", name, requireTools, install)
	}
	t.Skipf("%s is not installed (%s); set %s=require to fail instead", name, install, requireTools)
	return ""
}

// built is the site built once for every test that reads it.
var built struct {
	once   sync.Once
	dir    string // the output directory
	output string // what hugo printed
	err    error
}

// buildSite builds the site with hugo into a temporary directory, once, and returns the
// directory and what hugo printed. It skips (or fails) as tool does without hugo.
func buildSite(t *testing.T) (dir, output string) {
	t.Helper()
	hugo := tool(t, "hugo", "", "apt-get install -y hugo")
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "r4c-site-")
		if built.err != nil {
			return
		}
		cmd := exec.Command(hugo, "--source", filepath.Join(root, "docs"), "--destination", built.dir,
			"--cleanDestinationDir", "--printPathWarnings")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		built.err = cmd.Run()
		built.output = out.String()
	})
	if built.err != nil {
		t.Fatalf("hugo failed: %v\n%s", built.err, built.output)
	}
	return built.dir, built.output
}

// The site builds with no warning and no error: a broken {{< ref >}}, a missing example
// file or region, an unknown policy in a table shortcode or two files
// published at one path would each print one.
func TestSiteBuildsWithoutWarnings(t *testing.T) {
	_, out := buildSite(t)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "WARN") || strings.Contains(line, "ERROR") {
			t.Errorf("hugo: %s", line)
		}
	}
}
