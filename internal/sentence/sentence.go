// Package sentence holds the small text rule that messages built from
// parts share: a sentence starts with a capital letter.
package sentence

import (
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
