// Package site holds the tests of the documentation site in docs/: it builds with Hugo
// without a warning or an error; no internal link or anchor of the built pages is
// broken; every page is reachable from the home page; a headless Chromium shows the home
// page and a policy page with their titles and their code blocks visible and non-empty;
// and every Go code block of README.md and the site comes from a file under examples/
// (every configuration block from a file a test loads).
//
// The tests that need hugo or chromium skip, saying why, when the binary is not
// installed, unless DOCS_SITE_TOOLS=require (which .ci/run sets, having installed both):
// then they fail instead.
package site
