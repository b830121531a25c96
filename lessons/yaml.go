package lessons

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/internal/yamlfield"
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

// mapping reads a mapping node's fields (yamlfield.Read), reporting
// unknown and repeated keys at their file lines.
func (p *problems) mapping(n *yaml.Node, label string, known ...string) yamlfield.Fields {
	return yamlfield.Read(n, label, p.report, known...)
}

// report is yamlfield's Report for this file: YAML lines moved by off.
func (p *problems) report(line int, format string, args ...any) {
	p.add(line+p.off, format, args...)
}

// texts reads a list of texts; absent or null is an empty list. lines
// gets the file line of each item.
func (p *problems) texts(m yamlfield.Fields, label, key string, lines map[string]int) []string {
	n := m.Values[key]
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.yamlf(n, "%s: %s: expected a list, like [a, b], found %s", label, key, yamlfield.Describe(n))
		return nil
	}
	var out []string
	for _, e := range n.Content {
		if e.Kind != yaml.ScalarNode || strings.TrimSpace(e.Value) == "" {
			p.yamlf(e, "%s: %s: expected a non-empty text item, found %s", label, key, yamlfield.Describe(e))
			continue
		}
		v := strings.TrimSpace(e.Value)
		out = append(out, v)
		lines[key+"\x00"+v] = e.Line + p.off
	}
	return out
}
