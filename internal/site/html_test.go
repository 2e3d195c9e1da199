package site

import (
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// page is one built HTML page: its URL path, the ids it declares and the links it holds.
type page struct {
	path  string          // e.g. "/policies/retry/"
	ids   map[string]bool // id (and a's name) attributes
	links []string        // href and src attribute values, as written
	title string          // the <title> text
}

// readPages parses every .html file of the built site in dir, by URL path.
func readPages(t *testing.T, dir string) map[string]*page {
	t.Helper()
	pages := map[string]*page{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		u := "/" + filepath.ToSlash(rel)
		u = strings.TrimSuffix(u, "index.html")
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		doc, err := html.Parse(f)
		if err != nil {
			return err
		}
		pg := &page{path: u, ids: map[string]bool{}}
		walk(doc, pg)
		pages[u] = pg
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// walk collects n's ids, links and title into pg.
func walk(n *html.Node, pg *page) {
	if n.Type == html.ElementNode {
		for _, a := range n.Attr {
			switch {
			case a.Key == "id", a.Key == "name" && n.Data == "a":
				pg.ids[a.Val] = true
			case a.Key == "href" && (n.Data == "a" || n.Data == "link"), a.Key == "src":
				pg.links = append(pg.links, a.Val)
			}
		}
		if n.Data == "title" && n.FirstChild != nil {
			pg.title = n.FirstChild.Data
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, pg)
	}
}

// resolve returns the site path and fragment that link, found on the page at from,
// points to; false for a link that leaves the site (a scheme or a host) or is mailto.
func resolve(from, link string) (target, fragment string, internal bool) {
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", "", false
	}
	p := u.Path
	switch {
	case p == "":
		p = from
	case !strings.HasPrefix(p, "/"):
		p = path.Join(path.Dir(from+"x"), p)
		if strings.HasSuffix(u.Path, "/") {
			p += "/"
		}
	}
	return p, u.Fragment, true
}

// exists reports whether the site path p is a file of the built site in dir: a page
// (p/index.html) or another file.
func exists(dir, p string) bool {
	f := filepath.Join(dir, filepath.FromSlash(p))
	if st, err := os.Stat(f); err == nil {
		if !st.IsDir() {
			return true
		}
		_, err := os.Stat(filepath.Join(f, "index.html"))
		return err == nil
	}
	return false
}

// pageKey returns the key of readPages' map for the site path p.
func pageKey(p string) string {
	p = strings.TrimSuffix(p, "index.html")
	if !strings.HasSuffix(p, "/") && path.Ext(p) == "" {
		p += "/"
	}
	return p
}
