package site

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is where Debian's package chromium installs the browser.
const chromium = "/usr/bin/chromium"

// codeBlock is what the browser reports of one code block of a page.
type codeBlock struct {
	Visible bool   `json:"visible"` // laid out with a size, not hidden
	Text    string `json:"text"`    // its text as rendered
}

// shown is what the browser reports of a page.
type shown struct {
	Title  string      `json:"title"`  // document.title
	H1     string      `json:"h1"`     // the text of the first heading of main
	Blocks []codeBlock `json:"blocks"` // main's code blocks
}

// inspect is run in the page: its title, its first heading, and each code block (pre).
const inspect = `(() => {
  const blocks = [...document.querySelectorAll("main pre")].map(pre => {
    const r = pre.getBoundingClientRect(), s = getComputedStyle(pre);
    return {visible: r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none" && s.opacity !== "0",
            text: pre.innerText};
  });
  const h1 = document.querySelector("main h1");
  return {title: document.title, h1: h1 ? h1.innerText : "", blocks};
})()`

// A real headless browser opens the built home page and the rate limiter's page: each
// has the title of its front matter, and every code block on it (the home page's quick
// start, the policy's example) is laid out visible and has text.
func TestBrowserShowsPagesAndCodeBlocks(t *testing.T) {
	browser := tool(t, "chromium", chromium, "apt-get install -y chromium")
	dir, _ := buildSite(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	for _, tc := range []struct {
		path, content string // the page, and its source under docs/content
		title         string // the <title> wanted: the front matter's, then the site's
	}{
		{"/", "_index.md", "resilience4go"},
		{"/policies/ratelimit/", "policies/ratelimit.md", frontTitle(t, "policies/ratelimit.md") + " · resilience4go"},
	} {
		if err := chromedp.Do(browserCtx, chromedp.Navigate(srv.URL+tc.path), chromedp.WaitVisible("main h1")); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		got, err := chromedp.Run(browserCtx, chromedp.Evaluate[shown](inspect))
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if got.Title != tc.title {
			t.Errorf("%s: title %q, want %q", tc.path, got.Title, tc.title)
		}
		if want := frontTitle(t, tc.content); got.H1 != want {
			t.Errorf("%s: heading %q, want %q", tc.path, got.H1, want)
		}
		if len(got.Blocks) == 0 {
			t.Errorf("%s: no code block", tc.path)
		}
		for i, b := range got.Blocks {
			if !b.Visible {
				t.Errorf("%s: code block %d is not visible", tc.path, i)
			}
			if len(regexp.MustCompile(`\S`).FindAllString(b.Text, 2)) < 2 {
				t.Errorf("%s: code block %d is empty: %q", tc.path, i, b.Text)
			}
		}
	}
	// Close the browser before the server, and wait for it to exit.
	if err := chromedp.Cancel(browserCtx); err != nil {
		t.Errorf("closing the browser: %v", err)
	}
}

// frontTitle returns the title in the front matter of docs/content/name.
func frontTitle(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "content", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^title:\s*"?(.*?)"?\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no title in its front matter", name)
	}
	return string(m[1])
}
