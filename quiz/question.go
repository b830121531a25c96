package quiz

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/internal/yamlfield"
)

// questionFields are the keys a question may have; which ones a kind uses
// is in kindFields.
var questionFields = []string{"id", "kind", "prompt", "takeaway", "options", "items",
	"answer", "tolerance", "unit", "explain", "experiment"}

var kindFields = map[Kind][]string{
	Single:  {"options"},
	Multi:   {"options"},
	Predict: {"options", "experiment"},
	Numeric: {"answer", "tolerance", "unit", "explain"},
	Order:   {"items"},
}

func (p *parser) question(i int, n *yaml.Node) *Question {
	label := fmt.Sprintf("question %d", i+1)
	if n.Kind != yaml.MappingNode {
		p.errf(n.Line, "%s: expected a mapping with id, kind, prompt and takeaway, found %s", label, DescribeNode(n))
		return nil
	}
	q := &Question{Line: n.Line}
	// Name the question by its id in every later problem, when it has one.
	if idn := mapValue(n, "id"); idn != nil && idn.Kind == yaml.ScalarNode && strings.TrimSpace(idn.Value) != "" {
		label = "question " + strings.TrimSpace(idn.Value)
	}
	f := yamlfield.Read(n, label, p.errf, questionFields...)
	if v := f.Need("id"); v != nil {
		q.ID = yamlfield.TextOf(v, label, "id", p.errf)
		if q.ID != "" && !ValidID(q.ID) {
			p.errf(v.Line, "%s: id: use lower-case letters, digits and dashes", label)
		}
	}
	if v := f.Need("kind"); v != nil {
		q.Kind = Kind(yamlfield.TextOf(v, label, "kind", p.errf))
		if q.Kind != "" && kindFields[q.Kind] == nil {
			p.errf(v.Line, "%s: kind: unknown kind %q (one of single, multi, numeric, order, predict)", label, q.Kind)
		}
	}
	if v := f.Need("prompt"); v != nil {
		q.Prompt = yamlfield.TextOf(v, label, "prompt", p.errf)
	}
	if v := f.Need("takeaway"); v != nil {
		q.Takeaway = yamlfield.TextOf(v, label, "takeaway", p.errf)
	}
	uses := kindFields[q.Kind]
	if uses == nil {
		return q // kind already reported; its fields cannot be judged
	}
	for _, key := range []string{"options", "items", "answer", "tolerance", "unit", "explain", "experiment"} {
		if v := f.Values[key]; v != nil && !slices.Contains(uses, key) {
			p.errf(v.Line, "%s: field %s is not used by %s questions", label, key, q.Kind)
		}
	}
	switch q.Kind {
	case Single, Multi, Predict:
		p.options(q, f, label)
	case Order:
		p.items(q, f, label)
	case Numeric:
		p.numeric(q, f, label)
	}
	if q.Kind == Predict {
		if v := f.Need("experiment"); v != nil {
			q.Experiment = yamlfield.TextOf(v, label, "experiment", p.errf)
		}
	}
	return q
}

func (p *parser) options(q *Question, f yamlfield.Fields, label string) {
	v := f.Need("options")
	if v == nil {
		return
	}
	q.Options = p.optionList(v, label, "options", true)
	line := f.KeyLine("options")
	if len(q.Options) < 2 && v.Kind == yaml.SequenceNode {
		p.errf(line, "%s: options: needs at least 2 options, has %d", label, len(q.Options))
	}
	correct := len(q.Correct())
	switch {
	case q.Kind == Multi && correct == 0:
		p.errf(line, "%s: options: a multi question needs at least one option with correct: true", label)
	case q.Kind != Multi && correct != 1:
		p.errf(line, "%s: options: a %s question needs exactly one option with correct: true, has %d", label, q.Kind, correct)
	}
}

func (p *parser) items(q *Question, f yamlfield.Fields, label string) {
	v := f.Need("items")
	if v == nil {
		return
	}
	q.Items = p.optionList(v, label, "items", false)
	if len(q.Items) < 2 && v.Kind == yaml.SequenceNode {
		p.errf(f.KeyLine("items"), "%s: items: needs at least 2 events to order, has %d", label, len(q.Items))
	}
}

// optionList reads options (choices) or items (events to order).
func (p *parser) optionList(v *yaml.Node, label, field string, choices bool) []Option {
	if v.Kind != yaml.SequenceNode {
		p.errf(v.Line, "%s: %s: expected a list, found %s", label, field, DescribeNode(v))
		return nil
	}
	if len(v.Content) > MaxOptions {
		p.errf(v.Line, "%s: %s: at most %d allowed, has %d", label, field, MaxOptions, len(v.Content))
	}
	known := []string{"text", "explain"}
	if choices {
		known = []string{"text", "correct", "pin", "explain"}
	}
	var out []Option
	for i, on := range v.Content {
		ol := fmt.Sprintf("%s: %s[%d]", label, field, i+1)
		if on.Kind != yaml.MappingNode {
			p.errf(on.Line, "%s: expected a mapping with %s, found %s", ol, strings.Join(known, ", "), DescribeNode(on))
			continue
		}
		o := Option{Line: on.Line}
		of := yamlfield.Read(on, ol, p.errf, known...)
		if t := of.Need("text"); t != nil {
			o.Text = yamlfield.TextOf(t, ol, "text", p.errf)
		}
		if e := of.Need("explain"); e != nil {
			o.Explain = yamlfield.TextOf(e, ol, "explain", p.errf)
		}
		if c := of.Values["correct"]; c != nil {
			o.Correct = p.boolean(c, ol, "correct")
		}
		if c := of.Values["pin"]; c != nil {
			o.Pin = p.boolean(c, ol, "pin")
		}
		out = append(out, o)
	}
	return out
}

func (p *parser) numeric(q *Question, f yamlfield.Fields, label string) {
	if v := f.Need("answer"); v != nil {
		q.Answer, _ = p.number(v, label, "answer")
	}
	if v := f.Values["tolerance"]; v == nil {
		p.errf(f.Node.Line, "%s: missing field tolerance (write tolerance: 0 if only the exact answer counts)", label)
	} else if t, ok := p.number(v, label, "tolerance"); ok {
		if t < 0 {
			p.errf(v.Line, "%s: tolerance: must not be negative", label)
		}
		q.Tolerance = t
	}
	if v := f.Values["unit"]; v != nil {
		q.Unit = yamlfield.TextOf(v, label, "unit", p.errf)
	}
	if v := f.Need("explain"); v != nil {
		q.Explain = yamlfield.TextOf(v, label, "explain", p.errf)
	}
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
