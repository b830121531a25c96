// Package sentence holds the small text rules that messages built from
// parts share: a sentence starts with a capital letter and ends with a
// full stop.
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
