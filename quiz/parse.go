package quiz

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/internal/yamlfield"
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
	f := yamlfield.Read(root, "quiz", p.errf, "id", "title", "questions")
	if n := f.Need("id"); n != nil {
		qz.ID = yamlfield.TextOf(n, "quiz", "id", p.errf)
		if qz.ID != "" && !ValidID(qz.ID) {
			p.errf(n.Line, "quiz: id %q: use lower-case letters, digits and dashes", qz.ID)
		}
	}
	if n := f.Values["title"]; n != nil {
		qz.Title = yamlfield.TextOf(n, "quiz", "title", p.errf)
	}
	n := f.Need("questions")
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

// DescribeNode names a YAML node the way problems do (yamlfield.Describe).
func DescribeNode(n *yaml.Node) string { return yamlfield.Describe(n) }
