// Package plottest keeps the documentation's charts beside the simulations that make
// them: a test draws its chart and Check compares it with the file the site publishes.
package plottest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/resilience4go/resilience4go/internal/plot"
)

// Dir is the folder of the published charts, from the module's root.
const Dir = "docs/static/plots"

// Check compares c, drawn, with Dir/name. With UPDATE_PLOTS=1 in the environment it
// writes the file instead. A chart that differs fails t with the command that redraws it.
func Check(t testing.TB, name string, c plot.Chart) {
	t.Helper()
	path := filepath.Join(root(t), Dir, name)
	got := c.SVG()
	if os.Getenv("UPDATE_PLOTS") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("plottest: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("plottest: %v (UPDATE_PLOTS=1 go test ./... draws it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("plottest: %s differs from the simulation's chart; UPDATE_PLOTS=1 go test ./... redraws it", path)
	}
}

// root returns the module's root: the folder above this file's internal/plottest.
func root(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("plottest: cannot find the module's root")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}
