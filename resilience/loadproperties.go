package resilience

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// LoadProperties reads configuration keys in the properties format: one key=value (or
// key: value) per line, a line ending in "\n", "\r\n" or "\r" alone (in any mix); blank
// lines and lines starting with # or ! are comments (a comment never continues); spaces
// around keys and values are trimmed; a line ending in an odd number of backslashes
// continues on the next (the last backslash is dropped; other backslashes are kept as
// written: no escape sequences are decoded); a UTF-8 byte-order mark at the start is
// ignored. It returns the flat map for WithProperties. A line with no key, a key longer
// than 1,024 bytes or a physical line longer than 1 MiB returns a *policy.ConfigError with
// code R4C-CFG-002 and the line number; a key given on two lines returns R4C-CFG-003,
// naming both lines. Keys are not checked here: NewRegistry does that. The work is
// linear in the size of r.
func LoadProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	lines := map[string]int{} // the line of each key
	sc := bufio.NewScanner(r)
	// Room for a longest line and its terminator ("\r\n"); a longer line is refused by
	// next, and one longer than the buffer by the scanner.
	sc.Buffer(make([]byte, 0, 64*1024), maxPropertiesLine+2)
	sc.Split((&lineScanner{}).split)
	lineNo := 0
	var bad error // why next returned false, when it was not the end of r
	// next reads the next physical line; false at the end of r or on a line it refuses.
	next := func() (string, bool) {
		if !sc.Scan() {
			if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
				bad = r4c.Errorf(r4c.BadSource, "", "", "line %d is longer than 1 MiB", lineNo+1)
			} else if err != nil {
				bad = r4c.Errorf(r4c.BadSource, "", "", "line %d: reading properties: %v", lineNo+1, err)
			}
			return "", false
		}
		lineNo++
		if len(sc.Bytes()) > maxPropertiesLine {
			bad = r4c.Errorf(r4c.BadSource, "", "", "line %d is longer than 1 MiB", lineNo)
			return "", false
		}
		return sc.Text(), true
	}
	var joined strings.Builder
	for {
		text, ok := next()
		if !ok {
			break
		}
		first := lineNo
		if lineNo == 1 {
			text = strings.TrimPrefix(text, byteOrderMark)
		}
		line := strings.TrimSpace(text)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue // a comment line never continues on the next
		}
		if continues(line) {
			// Each physical line is looked at once: the joined line grows in a builder, and
			// whether a line continues depends on its own trailing backslashes only (the
			// run before it is even once its last backslash is dropped).
			joined.Reset()
			for continues(line) {
				joined.WriteString(line[:len(line)-1])
				text, ok := next()
				if !ok && bad != nil {
					return nil, bad
				}
				line = strings.TrimSpace(text)
			}
			joined.WriteString(line)
			line = joined.String()
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return nil, r4c.Errorf(r4c.BadSource, "", line, "line %d: expected key=value", first)
		}
		key := strings.TrimSpace(line[:i])
		switch {
		case key == "":
			return nil, r4c.Errorf(r4c.BadSource, "", line, "line %d: the key is empty", first)
		case len(key) > maxKeyLen:
			return nil, r4c.Errorf(r4c.BadSource, key, "", "line %d: the key is longer than %d bytes", first, maxKeyLen)
		}
		if at, dup := lines[key]; dup {
			return nil, r4c.Errorf(r4c.DuplicateKey, key, "", "set twice in one source, on lines %d and %d", at, first)
		}
		lines[key] = first
		props[key] = strings.TrimSpace(line[i+1:])
	}
	if bad != nil {
		return nil, bad
	}
	return props, nil
}

// maxPropertiesLine is the longest physical line LoadProperties reads, in bytes, without
// its terminator: 1 MiB.
const maxPropertiesLine = 1 << 20

// lineScanner is bufio.ScanLines with the line terminators of the properties format:
// "\n", "\r\n" and "\r" alone. A "\r" at the end of the data read so far waits for the
// next byte, which may be its "\n". It remembers how much of the line it has searched
// for a terminator, so that a reader that returns a long line a few bytes at a time
// costs time linear in its length, not quadratic.
type lineScanner struct{ searched int }

// split is the bufio.SplitFunc.
func (s *lineScanner) split(data []byte, atEOF bool) (advance int, line []byte, err error) {
	advance, line, err = scanLines(data, atEOF, s.searched)
	if advance > 0 {
		s.searched = 0 // the next token starts at the scanner's data
	} else {
		s.searched = len(data)
	}
	return advance, line, err
}

// scanLines splits data as lineScanner does, knowing that data[:from] holds no
// terminator (but for a "\r" last, which waits for the byte after it).
func scanLines(data []byte, atEOF bool, from int) (advance int, line []byte, err error) {
	from = max(min(from, len(data))-1, 0) // the "\r" that ended the data may be one
	i := bytes.IndexAny(data[from:], "\r\n")
	if i >= 0 {
		i += from
	}
	switch {
	case i < 0 && atEOF && len(data) > 0:
		return len(data), data, nil // a last line with no terminator
	case i < 0:
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data) && data[i+1] == '\n':
		return i + 2, data[:i], nil
	case i+1 < len(data) || atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a "\r" last: is a "\n" next?
}

// byteOrderMark is the UTF-8 byte-order mark that some editors put at the start of a file.
const byteOrderMark = "\uFEFF"

// continues reports whether a line ends in an odd number of backslashes: the last one
// joins the next line; an even number is escaped backslashes.
func continues(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}
