package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCountsExportedNamesOfPublicPackagesOnly(t *testing.T) {
	pkgs, err := count("testdata/src")
	require.NoError(t, err)
	require.Len(t, pkgs, 1, "the package under internal/ is skipped")
	assert.Equal(t, "pub", pkgs[0].dir)
	assert.ElementsMatch(t, []string{
		"type A", "method A.M", "func New", "type I", "method I.Do",
		"const C", "const D", "var V", "func F",
	}, pkgs[0].names)
}

func TestReportFailsAboveEitherLimit(t *testing.T) {
	pkgs := []pkgNames{{dir: "a", names: []string{"func X", "func Y"}}, {dir: "b", names: []string{"func Z"}}}
	var out bytes.Buffer
	assert.True(t, report(&out, pkgs, 3, 2, false))
	assert.Contains(t, out.String(), "surface: 3 exported names in 2 packages\n")
	out.Reset()
	assert.False(t, report(&out, pkgs, 2, 0, false), "total 3 is above 2")
	assert.Contains(t, out.String(), "over the limit of 2")
	out.Reset()
	assert.False(t, report(&out, pkgs, 0, 1, false), "package a has 2, above 1")
	assert.Contains(t, out.String(), "   2 a  over the limit of 1")
}

// The module's own count is what CI checks; the test only asserts that the walk over
// the real tree finds the public packages and none under internal/.
func TestModuleWalkSkipsInternal(t *testing.T) {
	pkgs, err := count("../../..")
	require.NoError(t, err)
	dirs := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		dirs = append(dirs, p.dir)
		assert.NotContains(t, p.dir, "internal")
		assert.NotContains(t, p.dir, "examples")
	}
	assert.Contains(t, dirs, "ratelimit")
	assert.Contains(t, dirs, "policy")
}
