package site

import (
	"sort"
	"testing"
)

// No internal link of the built site is broken: each points to a file the build wrote
// and, with a fragment, to an id on that page (Hugo's own ref and relref check the page
// but not the anchor; a link written as plain Markdown is checked by neither).
func TestInternalLinksAndAnchors(t *testing.T) {
	dir, _ := buildSite(t)
	pages := readPages(t, dir)
	if len(pages) == 0 {
		t.Fatal("the build wrote no page")
	}
	var broken []string
	for _, pg := range pages {
		for _, link := range pg.links {
			target, frag, internal := resolve(pg.path, link)
			if !internal {
				continue
			}
			if !exists(dir, target) {
				broken = append(broken, pg.path+": "+link+" (no such file)")
				continue
			}
			if frag == "" {
				continue
			}
			to, ok := pages[pageKey(target)]
			if !ok || !to.ids[frag] {
				broken = append(broken, pg.path+": "+link+" (no anchor #"+frag+")")
			}
		}
	}
	sort.Strings(broken)
	for _, b := range broken {
		t.Error(b)
	}
}

// Every page is reachable from the home page by following links, so that no page is
// written that a reader cannot find.
func TestEveryPageReachableFromHome(t *testing.T) {
	dir, _ := buildSite(t)
	pages := readPages(t, dir)
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	for len(queue) > 0 {
		pg := pages[queue[0]]
		queue = queue[1:]
		if pg == nil {
			continue
		}
		for _, link := range pg.links {
			target, _, internal := resolve(pg.path, link)
			key := pageKey(target)
			if internal && !seen[key] {
				seen[key] = true
				queue = append(queue, key)
			}
		}
	}
	if _, ok := pages["/"]; !ok {
		t.Fatal("the build wrote no home page")
	}
	var lost []string
	for p := range pages {
		if !seen[p] {
			lost = append(lost, p)
		}
	}
	sort.Strings(lost)
	for _, p := range lost {
		t.Errorf("%s is not reachable from the home page", p)
	}
}
