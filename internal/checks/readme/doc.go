// Package readme holds the test that keeps README.md's code in step with tested files:
// every code block announced by a line `<!-- file: PATH -->` (or
// `<!-- file: PATH region: NAME -->`) must equal that file (or the lines between
// `// README:begin NAME` and `// README:end NAME` in it), so that each snippet a reader
// copies is compiled and run by the tests of the file it comes from.
package readme
