package lessons

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/quiz"
)

// problems collects Problems for one file; off is added to YAML line
// numbers (front matter starts on the file's second line).
type problems struct {
	path string
	off  int
	list []Problem
}

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, Problem{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// yamlf reports at a YAML node's line.
func (p *problems) yamlf(n *yaml.Node, format string, args ...any) {
	p.add(n.Line+p.off, format, args...)
}

// mapping returns a mapping node's values by key, reporting unknown and
// repeated keys.
func (p *problems) mapping(n *yaml.Node, label string, known ...string) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			p.yamlf(k, "%s: unknown field %q (known: %s)", label, k.Value, strings.Join(known, ", "))
		case m[k.Value] != nil:
			p.yamlf(k, "%s: field %s given twice", label, k.Value)
		default:
			m[k.Value] = v
		}
	}
	return m
}

// text reads a required (or, if n is nil and !required, absent) scalar.
func (p *problems) text(parent *yaml.Node, m map[string]*yaml.Node, label, key string, required bool) string {
	n := m[key]
	if n == nil {
		if required {
			p.yamlf(parent, "%s: missing field %s", label, key)
		}
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.yamlf(n, "%s: %s: expected text, found %s", label, key, quiz.DescribeNode(n))
		return ""
	}
	s := strings.TrimSpace(n.Value)
	if s == "" && (required || n.Tag != "!!null") {
		p.yamlf(n, "%s: %s: is empty", label, key)
	}
	return s
}

// texts reads a list of texts; absent or null is an empty list. lines
// gets the file line of each item.
func (p *problems) texts(m map[string]*yaml.Node, label, key string, lines map[string]int) []string {
	n := m[key]
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.yamlf(n, "%s: %s: expected a list, like [a, b], found %s", label, key, quiz.DescribeNode(n))
		return nil
	}
	var out []string
	for _, e := range n.Content {
		if e.Kind != yaml.ScalarNode || strings.TrimSpace(e.Value) == "" {
			p.yamlf(e, "%s: %s: expected a non-empty text item, found %s", label, key, quiz.DescribeNode(e))
			continue
		}
		v := strings.TrimSpace(e.Value)
		out = append(out, v)
		lines[key+"\x00"+v] = e.Line + p.off
	}
	return out
}
