package yamlfield

import (
	"fmt"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

func read(t *testing.T, src string, known ...string) (Fields, *[]string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var probs []string
	report := func(line int, format string, args ...any) {
		probs = append(probs, fmt.Sprintf("%d: ", line)+fmt.Sprintf(format, args...))
	}
	return Read(doc.Content[0], "lab", report, known...), &probs
}

// TestFieldsReportEveryShapeOfMistake: unknown, repeated, missing, empty
// and wrongly shaped fields are each reported at their line; an optional
// field may be null.
func TestFieldsReportEveryShapeOfMistake(t *testing.T) {
	f, probs := read(t, "id: x\nid: y\ncolour: red\ntitle: [a]\nnote:\nsummary: \"  \"\n", "id", "title", "note", "summary", "file")
	if got := f.Text("id", true); got != "x" {
		t.Errorf("id = %q, want the first one", got)
	}
	f.Text("title", true)
	if got := f.Text("note", false); got != "" {
		t.Errorf("null note = %q", got)
	}
	f.Text("summary", false)
	f.Text("file", true)
	want := []string{
		`2: lab: field id given twice`,
		`3: lab: unknown field "colour" (known: id, title, note, summary, file)`,
		`4: lab: title: expected text, found a list`,
		`6: lab: summary: is empty`,
		`1: lab: missing field file`,
	}
	if !slices.Equal(*probs, want) {
		t.Fatalf("problems:\n%q\nwant:\n%q", *probs, want)
	}
}
