package lessons

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/internal/yamlfield"
	"github.com/ownership-election/playground/quiz"
)

// loadLabs reads every <id>/lab.yaml of a lab catalogue. Folders without a
// lab.yaml (helpers such as internal/) are not labs and are skipped.
func loadLabs(fsys fs.FS, root string) ([]*Lab, []Problem) {
	var labs []*Lab
	var probs []Problem
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, []Problem{{Path: joinRoot(root, "."), Msg: "cannot read the lab catalogue: " + err.Error()}}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := readRegular(fsys, path.Join(e.Name(), "lab.yaml"))
		if err != nil {
			continue
		}
		tests, ps := testFuncs(fsys, e.Name(), root)
		probs = append(probs, ps...)
		lab, ps := ParseLab(joinRoot(root, path.Join(e.Name(), "lab.yaml")), e.Name(), data, tests)
		probs = append(probs, ps...)
		if lab.File != "" && !strings.Contains(lab.File, "/") {
			if _, err := fs.Stat(fsys, path.Join(e.Name(), lab.File)); err != nil {
				probs = append(probs, Problem{Path: lab.Path, Line: lab.fileLine,
					Msg: "lab: file: " + lab.File + " is not in the lab folder"})
			}
		}
		if readme, err := readRegular(fsys, path.Join(e.Name(), "README.md")); err == nil {
			lab.README = string(readme)
		}
		labs = append(labs, lab)
	}
	sort.Slice(labs, func(i, j int) bool { return labs[i].ID < labs[j].ID })
	return labs, probs
}

// testFuncs returns the names of the Test functions in dir/*_test.go.
//
// It scans tokens rather than parsing: the course is read before the TUI's
// first frame, and a full parse of the labs' tests was a sixth of that
// time. A top-level "func Name(" (no receiver) is all it looks for; a file
// that does not even scan is reported.
func testFuncs(fsys fs.FS, dir, root string) (map[string]bool, []Problem) {
	files, _ := fs.Glob(fsys, path.Join(dir, "*_test.go"))
	names := map[string]bool{}
	var probs []Problem
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := readRegular(fsys, f)
		if err != nil {
			probs = append(probs, Problem{Path: joinRoot(root, f), Msg: "cannot read: " + err.Error()})
			continue
		}
		var firstErr string
		var sc scanner.Scanner
		sc.Init(fset.AddFile(f, -1, len(src)), src, func(pos token.Position, msg string) {
			if firstErr == "" {
				firstErr = pos.String() + ": " + msg
			}
		}, 0)
		depth := 0
		for {
			_, tok, _ := sc.Scan()
			if tok == token.EOF {
				break
			}
			switch tok {
			case token.LBRACE, token.LPAREN, token.LBRACK:
				depth++
			case token.RBRACE, token.RPAREN, token.RBRACK:
				depth--
			case token.FUNC:
				if depth != 0 {
					continue
				}
				// func Name(   is a function; func (r T) Name(   a method.
				if _, t, name := sc.Scan(); t == token.IDENT {
					if _, t2, _ := sc.Scan(); t2 == token.LPAREN || t2 == token.LBRACK {
						depth++
						if strings.HasPrefix(name, "Test") {
							names[name] = true
						}
					}
				} else if t == token.LPAREN {
					depth++
				}
			}
		}
		if firstErr != "" {
			probs = append(probs, Problem{Path: joinRoot(root, f), Msg: "cannot read Go: " + firstErr})
		}
	}
	return names, probs
}

// ParseLab reads one lab.yaml. dir is the lab's folder name, which must be
// its id. tests holds the Test function names of the lab's _test.go files;
// every step must name one of them. When tests is nil they are not checked.
func ParseLab(path, dir string, data []byte, tests map[string]bool) (*Lab, []Problem) {
	p := &problems{path: path}
	lab := &Lab{ID: dir, Path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return lab, []Problem{quiz.YAMLError(path, 0, err)}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		p.add(1, "lab.yaml: expected fields id, title, lesson, file and steps")
		return lab, p.list
	}
	root := doc.Content[0]
	m := p.mapping(root, "lab", "id", "title", "lesson", "file", "steps")
	if id := m.Text("id", true); id != "" && id != dir {
		p.yamlf(m.Values["id"], "lab: id %q must match the folder name %q", id, dir)
	}
	lab.Title = m.Text("title", true)
	lab.Lesson = m.Text("lesson", true)
	if n := m.Values["lesson"]; n != nil {
		lab.lessonLine = n.Line
	}
	lab.File = m.Text("file", true)
	if n := m.Values["file"]; n != nil {
		lab.fileLine = n.Line
	}
	if lab.File != "" && (!strings.HasSuffix(lab.File, ".go") || strings.HasSuffix(lab.File, "_test.go") || strings.Contains(lab.File, "/")) {
		p.yamlf(m.Values["file"], "lab: file %q: name the stub the learner edits, a .go file in the lab folder (not a test)", lab.File)
	}
	steps := m.Values["steps"]
	switch {
	case steps == nil:
		p.yamlf(root, "lab: missing field steps")
	case steps.Kind != yaml.SequenceNode || len(steps.Content) == 0:
		p.yamlf(steps, "lab: steps: expected a list of at least one step")
	default:
		seen := map[string]bool{}
		for _, sn := range steps.Content {
			st := parseStep(p, sn, tests)
			if st.Test != "" && seen[st.Test] {
				p.yamlf(sn, "step %s: the same test is listed twice", st.Test)
			}
			seen[st.Test] = true
			lab.Steps = append(lab.Steps, st)
		}
	}
	return lab, p.list
}

func parseStep(p *problems, n *yaml.Node, tests map[string]bool) Step {
	var st Step
	if n.Kind != yaml.MappingNode {
		p.yamlf(n, "step: expected test, title and hints, found %s", yamlfield.Describe(n))
		return st
	}
	m := p.mapping(n, "step", "test", "title", "hints")
	st.Test = m.Text("test", true)
	label := "step " + st.Test
	if st.Test != "" && tests != nil && !tests[st.Test] {
		p.yamlf(m.Values["test"], "%s: no func %s in the lab's _test.go files", label, st.Test)
	}
	m.Label = label // the step's own problems name its test
	st.Title = m.Text("title", true)
	st.Hints = p.texts(m, label, "hints", map[string]int{})
	if len(st.Hints) == 0 {
		at := n
		if m.Values["hints"] != nil {
			at = m.Values["hints"]
		}
		p.yamlf(at, "%s: needs at least one hint", label)
	}
	return st
}
