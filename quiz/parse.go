package quiz

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxOptions is the most options (or order items) a question may have, so
// that every choice has a single number key in the TUI.
const MaxOptions = 9

// idPattern is the shape of quiz and question ids: lower-case words and
// digits joined by dashes.
var idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidID reports whether s is a well-formed quiz or question id.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// Parse reads one quiz.yaml. path is used only in problems. It returns the
// quiz as far as it could be read, and every problem found: syntax, unknown
// or missing fields, and answer-key problems (see content/README.md). A
// quiz with problems should be fixed, not taken: its grading may be wrong.
// The quiz is nil only when the file is not a YAML mapping at all.
func Parse(path string, data []byte) (*Quiz, []Problem) {
	p := &parser{path: path}
	q := p.parse(data)
	return q, p.probs
}

type parser struct {
	path  string
	probs []Problem
}

func (p *parser) errf(line int, format string, args ...any) {
	p.probs = append(p.probs, Problem{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// YAMLError turns an error from the yaml package into a Problem, taking the
// line number out of the message when there is one. offset is added to the
// line (for YAML embedded further down a file, like front matter).
func YAMLError(path string, offset int, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimPrefix(strings.Replace(msg, m[0], "", 1), ": ")
		line += offset
	}
	return Problem{Path: path, Line: line, Msg: "YAML syntax: " + msg}
}

func (p *parser) parse(data []byte) *Quiz {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.probs = append(p.probs, YAMLError(p.path, 0, err))
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.errf(1, "file is empty: expected id, title and questions")
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.errf(root.Line, "expected a mapping with id, title and questions, found %s", DescribeNode(root))
		return nil
	}
	qz := &Quiz{Path: p.path}
	f := p.fields(root, "quiz", "id", "title", "questions")
	if n := f.need("id"); n != nil {
		qz.ID = p.str(n, "quiz", "id")
		if qz.ID != "" && !ValidID(qz.ID) {
			p.errf(n.Line, "quiz: id %q: use lower-case letters, digits and dashes", qz.ID)
		}
	}
	if n := f.m["title"]; n != nil {
		qz.Title = p.str(n, "quiz", "title")
	}
	n := f.need("questions")
	if n == nil {
		return qz
	}
	if n.Kind != yaml.SequenceNode {
		p.errf(n.Line, "quiz: questions: expected a list, found %s", DescribeNode(n))
		return qz
	}
	if len(n.Content) == 0 {
		p.errf(n.Line, "quiz: questions: the list is empty")
	}
	seen := map[string]int{}
	for i, qn := range n.Content {
		q := p.question(i, qn)
		if q == nil {
			continue
		}
		if q.ID != "" {
			if first, dup := seen[q.ID]; dup {
				p.errf(q.Line, "question %s: id: duplicate id (first used on line %d)", q.ID, first)
			} else {
				seen[q.ID] = q.Line
			}
		}
		qz.Questions = append(qz.Questions, q)
	}
	return qz
}

// fieldSet is a mapping's values by key, remembering the mapping for
// "missing field" problems.
type fieldSet struct {
	p     *parser
	node  *yaml.Node
	label string
	m     map[string]*yaml.Node
	keys  map[string]*yaml.Node // the key nodes, for problems about a whole field
}

// fields reads a mapping node, reporting unknown and repeated keys.
func (p *parser) fields(n *yaml.Node, label string, known ...string) fieldSet {
	fs := fieldSet{p: p, node: n, label: label, m: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if !slices.Contains(known, key) {
			p.errf(k.Line, "%s: unknown field %q (known: %s)", label, key, strings.Join(known, ", "))
			continue
		}
		if _, dup := fs.m[key]; dup {
			p.errf(k.Line, "%s: field %s given twice", label, key)
			continue
		}
		fs.m[key] = v
		fs.keys[key] = k
	}
	return fs
}

// keyLine is the line of a present field's key.
func (f fieldSet) keyLine(key string) int { return f.keys[key].Line }

func (f fieldSet) need(key string) *yaml.Node {
	n := f.m[key]
	if n == nil {
		f.p.errf(f.node.Line, "%s: missing field %s", f.label, key)
	}
	return n
}

func (p *parser) str(n *yaml.Node, label, field string) string {
	if n.Kind != yaml.ScalarNode {
		p.errf(n.Line, "%s: %s: expected text, found %s", label, field, DescribeNode(n))
		return ""
	}
	s := strings.TrimSpace(n.Value)
	if s == "" {
		p.errf(n.Line, "%s: %s: is empty", label, field)
	}
	return s
}

func (p *parser) boolean(n *yaml.Node, label, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.errf(n.Line, "%s: %s: expected true or false, found %q", label, field, n.Value)
	}
	return b
}

func (p *parser) number(n *yaml.Node, label, field string) (float64, bool) {
	var x float64
	if n.Kind != yaml.ScalarNode || n.Tag == "!!str" || n.Decode(&x) != nil {
		p.errf(n.Line, "%s: %s: expected a number, found %q", label, field, n.Value)
		return 0, false
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		p.errf(n.Line, "%s: %s: must be a finite number", label, field)
		return 0, false
	}
	return x, true
}

// DescribeNode names a YAML node the way error messages do: "a mapping",
// "a list", "an alias", the quoted scalar, or "nothing".
func DescribeNode(n *yaml.Node) string {
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
