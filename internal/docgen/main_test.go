package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// root is the module's root, from this package's directory.
const root = "../.."

// The generated files on disk are what the generator writes from today's code: the
// reference of the R4C codes lists exactly the constants that declare them, and the
// policies' tables are their descriptors'. A stale file fails here (and in .ci/run's
// go generate check); `go generate ./internal/docgen` rewrites them.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generate(root)
	require.NoError(t, err)
	require.Len(t, files, 2)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		require.NoError(t, err, "%s is missing: run go generate ./internal/docgen", name)
		assert.Equal(t, string(want), string(got), "%s is stale: run go generate ./internal/docgen", name)
	}
}

// Every policy the site has a page for is in the data, each attribute with a key, an
// option and a default, each policy with its events; the codes the policies declare are
// on the reference page.
func TestPoliciesData(t *testing.T) {
	files, err := generate(root)
	require.NoError(t, err)
	var pols map[string]policyDoc
	require.NoError(t, json.Unmarshal(files[dataFile], &pols))
	for _, name := range []string{"ratelimit", "retry", "circuitbreaker", "timeout", "bulkhead", "fallback", "hedge", "adaptivelimit"} {
		p, ok := pols[name]
		if !assert.True(t, ok, "no data for %s", name) {
			continue
		}
		assert.NotEmpty(t, p.Attributes, name)
		assert.NotEmpty(t, p.Events, name)
		for _, a := range p.Attributes {
			assert.Equal(t, p.Layer+"."+a.Name, a.Key)
			assert.NotEmpty(t, a.Option, "%s.%s", name, a.Name)
			assert.NotEmpty(t, a.Default, "%s.%s", name, a.Name)
		}
		for _, e := range p.Events {
			assert.NotEmpty(t, e.Doc, "the doc of %s's event %s", name, e.Name)
		}
	}
	// Defaults as the options' documentation states them.
	assert.Equal(t, attribute{Name: "maxConcurrent", Key: "bulkhead.maxConcurrent", Option: "MaxConcurrent", Default: "25"}, pols["bulkhead"].Attributes[0])
	assert.Equal(t, "60s", find(t, pols["circuitbreaker"].Attributes, "waitInOpen").Default)
	assert.Equal(t, "COUNT_BASED", find(t, pols["circuitbreaker"].Attributes, "slidingWindowType").Default)
	assert.Equal(t, "none", find(t, pols["ratelimit"].Attributes, "permits").Default)
	assert.Equal(t, "500ms", find(t, pols["retry"].Attributes, "delay").Default)
	assert.Contains(t, pols["hedge"].Codes, codeRef{Code: "R4C-HDG-002", Meaning: "refuses a composition with a hedge and a retry: the hedge takes the retry's place."})
	page := string(files[errorsPage])
	for _, c := range []string{"R4C-ATR-001", "R4C-REG-012", "R4C-HDG-001", "R4C-RLM-001", "R4C-GEN-008"} {
		assert.Contains(t, page, `<span id="`+lowerCode(c)+`">`+c+`</span>`)
	}
}

func find(t *testing.T, attrs []attribute, name string) attribute {
	t.Helper()
	for _, a := range attrs {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no attribute %s", name)
	return attribute{}
}

func lowerCode(c string) string {
	b := []byte(c)
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}
