// Package yamlfield reads the fields of a YAML mapping the one way the
// course's files (lesson front matter, lab manifests, quizzes) are read:
// unknown and repeated keys, missing fields, and values of the wrong
// shape are each reported once, at their line, in the same words.
package yamlfield

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Report records a problem at a line of the YAML document.
type Report func(line int, format string, args ...any)

// Fields is a mapping's values by key, as Read found them.
type Fields struct {
	// Node is the mapping, for problems about a missing field.
	Node *yaml.Node
	// Label starts every problem: "quiz", "question q1", "front matter".
	Label string
	// Values and Keys are each known field's value and key node.
	Values, Keys map[string]*yaml.Node
	report       Report
}

// Read reads mapping n, reporting keys not in known and keys given twice
// (the first one counts).
func Read(n *yaml.Node, label string, report Report, known ...string) Fields {
	f := Fields{Node: n, Label: label, Values: map[string]*yaml.Node{}, Keys: map[string]*yaml.Node{}, report: report}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			report(k.Line, "%s: unknown field %q (known: %s)", label, k.Value, strings.Join(known, ", "))
		case f.Values[k.Value] != nil:
			report(k.Line, "%s: field %s given twice", label, k.Value)
		default:
			f.Values[k.Value], f.Keys[k.Value] = v, k
		}
	}
	return f
}

// KeyLine is the line of a present field's key.
func (f Fields) KeyLine(key string) int { return f.Keys[key].Line }

// Need is a required field's value, reported as missing when absent.
func (f Fields) Need(key string) *yaml.Node {
	n := f.Values[key]
	if n == nil {
		f.report(f.Node.Line, "%s: missing field %s", f.Label, key)
	}
	return n
}

// Text reads a field that holds text, trimmed. A required field must be
// there and not empty; an optional one may be absent or null.
func (f Fields) Text(key string, required bool) string {
	n := f.Values[key]
	switch {
	case n == nil && required:
		f.Need(key)
		return ""
	case n == nil, !required && n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return ""
	}
	return TextOf(n, f.Label, key, f.report)
}

// TextOf reads node n of field as text, trimmed, reporting a value that
// is not text or is empty.
func TextOf(n *yaml.Node, label, field string, report Report) string {
	if n.Kind != yaml.ScalarNode {
		report(n.Line, "%s: %s: expected text, found %s", label, field, Describe(n))
		return ""
	}
	s := strings.TrimSpace(n.Value)
	if s == "" {
		report(n.Line, "%s: %s: is empty", label, field)
	}
	return s
}

// Describe names a YAML node the way problems do: "a mapping", "a list",
// "an alias", the quoted scalar, or "nothing".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}
