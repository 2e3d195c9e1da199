// Command docgen writes what the documentation site shows of the code itself: the tables
// of each policy (docs/data/policies.json: its configuration attributes with their keys,
// options and built-in defaults; its event kinds; its metrics; its errors and R4C codes),
// read from the descriptors the policy packages register and from their sources, and the
// reference of every R4C error code (docs/content/reference/errors.md), read from the
// R4C-… constants of the module and their comments. go generate runs it; a test of this
// package fails when the files on disk are not what it would write.
package main

//go:generate go run . -root ../..

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "the module's root directory")
	flag.Parse()
	if err := write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

// Where the generated files go, relative to the module's root.
const (
	dataFile   = "docs/data/policies.json"
	errorsPage = "docs/content/reference/errors.md"
)

// write generates every file under root, writing only those whose content changes.
func write(root string) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(files) {
		path := filepath.Join(root, filepath.FromSlash(name))
		if old, err := os.ReadFile(path); err == nil && string(old) == string(files[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns the generated files, by path relative to root.
func generate(root string) (map[string][]byte, error) {
	codes, err := scanCodes(root)
	if err != nil {
		return nil, err
	}
	pols, err := policies(root, codes)
	if err != nil {
		return nil, err
	}
	data, err := encodeJSON(pols)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{dataFile: data, errorsPage: errorsMarkdown(codes)}, nil
}
