package codegen

import (
	"go/ast"
	"go/build/constraint"
	"path/filepath"
	"strings"

	"github.com/samber/lo"
)

// buildConstraint returns the build constraint of f, the file named name, as a
// //go:build line: its own, and that of a _GOOS or _GOARCH suffix of its name; "" when it
// has neither.
func buildConstraint(f *ast.File, name string) string {
	var terms []string
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				if x, err := constraint.Parse(c.Text); err == nil {
					terms = append(terms, "("+x.String()+")")
				}
			}
		}
	}
	parts := strings.Split(strings.TrimSuffix(filepath.Base(name), ".go"), "_")
	if n := len(parts); n >= 3 && knownOS[parts[n-2]] && knownArch[parts[n-1]] {
		terms = append(terms, parts[n-2], parts[n-1])
	} else if n >= 2 && (knownOS[parts[n-1]] || knownArch[parts[n-1]]) {
		terms = append(terms, parts[n-1])
	}
	if len(terms) == 0 {
		return ""
	}
	x, err := constraint.Parse("//go:build " + strings.Join(terms, " && "))
	if err != nil {
		return ""
	}
	return "//go:build " + x.String()
}

// knownOS and knownArch are the GOOS and GOARCH values that a file name's suffix
// constrains the file to, as the go command reads them.
var (
	knownOS = lo.SliceToMap(strings.Fields("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos"),
		func(s string) (string, bool) { return s, true })
	knownArch = lo.SliceToMap(strings.Fields("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm"),
		func(s string) (string, bool) { return s, true })
)
