// Package sanitize makes text that did not come from the program safe to
// reach a terminal: escape sequences are dropped and control characters
// shown as visible symbols, so a learner's test output, a history file or
// a published summary can neither retitle the window (OSC 0), write the
// clipboard (OSC 52), move the cursor over other lines (CSI) nor talk to
// the terminal in any other way. The program's own styling is added after
// the text passes through here, so it stays.
//
// Foreign strings are cleaned where they enter (a report read, a history
// decoded, a summary or submission fetched), not at each print.
package sanitize

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Text returns s with every escape sequence (CSI, OSC, DCS, APC, SOS,
// PM and two-byte ESC sequences, as github.com/charmbracelet/x/ansi
// parses them) dropped, and every other control character except
// newline and tab shown as a visible symbol: C0 and DEL as their Unicode
// control pictures (␛, ␇, ␍), C1 and the bidirectional overrides that
// reorder a line on screen as \uXXXX. Bytes that are not UTF-8 become
// U+FFFD. Text that needs none of this is returned as it is.
func Text(s string) string { return clean(s, false) }

// Line is Text for a string that must stay on one line (a name, a
// title, a field of a table row): newline and tab are shown as symbols
// too, so the string cannot start a line of its own.
func Line(s string) string { return clean(s, true) }

// Lines cleans each of lines with Text, in place, and returns it.
func Lines(lines []string) []string {
	for i, l := range lines {
		lines[i] = Text(l)
	}
	return lines
}

func clean(s string, oneLine bool) string {
	if safe(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == ansi.ESC {
			// The parser finds where the sequence ends (its final byte,
			// BEL or ST); an unterminated one runs to the end of s.
			_, _, n, _ := ansi.DecodeSequence(s[i:], ansi.NormalState, nil)
			i += max(n, 1)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			if oneLine {
				b.WriteRune(0x2400 + r)
			} else {
				b.WriteRune(r)
			}
		case r < 0x20:
			b.WriteRune(0x2400 + r) // ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case (r >= 0x80 && r <= 0x9f) || bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// safe reports whether s has nothing Text would change: printable ASCII
// (with newline and tab unless oneLine) and UTF-8 that holds no C1
// control and no bidirectional control.
func safe(s string, oneLine bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && (oneLine || (c != '\n' && c != '\t'))) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r <= 0x9f || bidi(r) {
			return false
		}
		i += size
	}
	return true
}

// bidi reports the characters that change the order a terminal draws a
// line in (the "Trojan Source" characters): embeddings, overrides,
// isolates and the marks.
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// Strings cleans, with Text, every string v reaches: v is a pointer, and
// every exported string field, element and map key or value under it
// (through structs, pointers, slices, arrays and maps) is replaced. It is
// for a value decoded from foreign data, so that a field added later is
// cleaned too without anyone remembering to.
func Strings(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	walk(rv.Elem())
}

func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); !safe(s, false) {
				v.SetString(Text(s))
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() && v.Kind() == reflect.Pointer {
			walk(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				walk(f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i))
		}
	case reflect.Map:
		walkMap(v)
	}
}

// walkMap cleans a map's keys and values: map elements cannot be set in
// place, so each is copied, cleaned and put back (under its cleaned key).
func walkMap(m reflect.Value) {
	if m.IsNil() {
		return
	}
	for _, k := range m.MapKeys() {
		val := reflect.New(m.Type().Elem()).Elem()
		val.Set(m.MapIndex(k))
		walk(val)
		key := reflect.New(m.Type().Key()).Elem()
		key.Set(k)
		walk(key)
		if !key.Equal(k) {
			m.SetMapIndex(k, reflect.Value{})
		}
		m.SetMapIndex(key, val)
	}
}
