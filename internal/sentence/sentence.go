// Package sentence holds the small text rules that messages built from
// parts share: a sentence starts with a capital letter and ends with a
// full stop, and an error quoted on one line is its first line.
package sentence

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Capitalize returns s with its first letter in upper case, as the start
// of a sentence; the rest is left as it is ("etcd answered" → "Etcd
// answered"). An empty s stays empty.
func Capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// Join makes sentences of parts: each trimmed, capitalised and ended with
// one full stop, empty ones left out, joined by spaces.
func Join(parts []string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, Capitalize(strings.TrimSuffix(p, "."))+".")
		}
	}
	return strings.Join(out, " ")
}

// FirstLine is s up to its first line break: an error's headline, for a
// status line that has room for one line.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
