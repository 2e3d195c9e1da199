package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var snippet = regexp.MustCompile("(?s)<!-- file: (\\S+)(?: region: (\\S+))? -->\\s*```[a-z]*\\n(.*?)```")

// region returns the lines of src between `// README:begin name` and `// README:end name`,
// without their common indentation and the blank lines around them.
func region(t *testing.T, src, name string) string {
	t.Helper()
	begin := "// README:begin " + name
	end := "// README:end " + name
	i := strings.Index(src, begin)
	require.GreaterOrEqual(t, i, 0, "no %q", begin)
	j := strings.Index(src, end)
	require.Greater(t, j, i, "no %q after its begin", end)
	body := src[i+len(begin) : j]
	body = body[strings.IndexByte(body, '\n')+1:]
	body = body[:strings.LastIndexByte(body, '\n')+1]
	lines := strings.Split(strings.Trim(body, "\n"), "\n")
	indent := ""
	for k, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, "\t"))]
		if k == 0 || indent == "" || len(lead) < len(indent) {
			indent = lead
		}
	}
	for k, l := range lines {
		lines[k] = strings.TrimPrefix(l, indent)
	}
	return strings.Join(lines, "\n") + "\n"
}

// Every announced snippet of README.md equals the file, or the region of the file, that
// it names: the snippets are the tested code.
func TestReadmeSnippetsMatchTestedFiles(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	matches := snippet.FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, matches, "README.md announces no snippet")
	for _, m := range matches {
		path, name, block := m[1], m[2], m[3]
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		require.NoError(t, err, "README names %s", path)
		want := string(src)
		if name != "" {
			want = region(t, want, name)
		}
		assert.Equal(t, want, block, "README's snippet of %s %s is out of date", path, name)
	}
}

// Every Go code block of README.md is announced, so none escapes the check above.
func TestReadmeGoBlocksAreAllTested(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	require.NoError(t, err)
	announced := 0
	for _, m := range snippet.FindAllString(string(readme), -1) {
		if strings.Contains(m, "```go\n") {
			announced++
		}
	}
	assert.Equal(t, strings.Count(string(readme), "```go\n"), announced,
		"a ```go block of README.md has no <!-- file: … --> line before it")
}

// The README's test command is the one the checks run (.ci/run), so that what a newcomer
// runs is what is checked.
func TestReadmeTestCommandIsTheChecksCommand(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	cmd := regexp.MustCompile(`(?m)^(go run gotest\.tools/gotestsum@\S+ -- [^#\n]*?)\s+# the tests`).FindStringSubmatch(string(readme))
	require.NotNil(t, cmd, "README.md shows no test command")
	assert.Contains(t, strings.Split(string(ci), "\n"), cmd[1], ".ci/run does not run the README's test command")
}
