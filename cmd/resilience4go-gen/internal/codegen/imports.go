package codegen

import (
	"fmt"
	"go/types"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// imports chooses the names the generated file imports packages under: each package's
// own name, unless the package being generated into or another import has it, or it is
// one of the names the generated code declares.
type imports struct {
	self     *types.Package    // the package generated into
	byPath   map[string]string // import path → name used
	declared map[string]string // import path → package name
	taken    map[string]bool   // names in use
}

func newImports(self *types.Package, reserved ...string) *imports {
	im := &imports{self: self, byPath: map[string]string{}, declared: map[string]string{}, taken: map[string]bool{}}
	for _, n := range reserved {
		im.taken[n] = true
	}
	return im
}

// use returns the name the package at path, whose package clause says name, is imported
// under, adding it to the imports.
func (im *imports) use(path, name string) string {
	if n, ok := im.byPath[path]; ok {
		return n
	}
	n := name
	for i := 1; im.taken[n] || im.self.Scope().Lookup(n) != nil; i++ {
		n = name + strconv.Itoa(i)
	}
	im.byPath[path], im.declared[path], im.taken[n] = n, name, true
	return n
}

// qualifier is a types.Qualifier that names other packages as imported here.
func (im *imports) qualifier(p *types.Package) string {
	if p == im.self {
		return ""
	}
	return im.use(p.Path(), p.Name())
}

// typeString writes t as the generated file names it.
func (im *imports) typeString(t types.Type) string { return types.TypeString(t, im.qualifier) }

// decl returns the declaration of the imports whose names used holds, standard library
// first, each group sorted by path.
func (im *imports) decl(used map[string]bool) string {
	var std, other []string
	for _, p := range slices.Sorted(maps.Keys(im.byPath)) {
		if !used[im.byPath[p]] {
			continue
		}
		line := strconv.Quote(p)
		if n := im.byPath[p]; n != im.declared[p] {
			line = n + " " + line
		}
		if isStd(p) {
			std = append(std, line)
		} else {
			other = append(other, line)
		}
	}
	if len(std)+len(other) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("import (\n")
	for _, l := range std {
		fmt.Fprintf(&b, "\t%s\n", l)
	}
	if len(std) > 0 && len(other) > 0 {
		b.WriteString("\n")
	}
	for _, l := range other {
		fmt.Fprintf(&b, "\t%s\n", l)
	}
	b.WriteString(")\n")
	return b.String()
}
