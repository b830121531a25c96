package lessons

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/internal/yamlfield"
	"github.com/ownership-election/playground/quiz"
)

// MaxFenceWidth is the widest a line inside a fenced block may be, so that
// diagrams and code fit an 80-column terminal with the reader's margins.
const MaxFenceWidth = 76

// fenceTab is the tab stop the TUI expands tabs to (theme.TabWidth), so a
// tab-indented line is measured as wide as it will be shown.
const fenceTab = 4

// fenceWidth is the width of a line in columns with tabs expanded.
func fenceWidth(line string) int {
	w := 0
	for _, r := range line {
		if r == '\t' {
			w += fenceTab - w%fenceTab
		} else {
			w++
		}
	}
	return w
}

var frontFields = []string{"id", "title", "summary", "objectives", "prerequisites",
	"experiments", "labs", "quiz"}

// ParseLesson reads one lesson.md on its own: front matter and pages. It
// does not look at other files, so references (quiz, prerequisites, labs,
// experiments, @check ids) are checked by Load, not here. path is used in
// problems and as Lesson.Path. The lesson is never nil.
func ParseLesson(path string, data []byte) (*Lesson, []Problem) {
	p := &problems{path: path, off: 1}
	l := &Lesson{Path: path, lines: map[string]int{}}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		p.add(1, "front matter: the file must start with a line ---, then the YAML fields, then ---")
		return l, p.list
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		p.add(1, "front matter: no closing --- line")
		return l, p.list
	}
	parseFront(p, l, strings.Join(lines[1:end], "\n"))
	l.Pages = parsePages(p, lines, end+1)
	return l, p.list
}

func parseFront(p *problems, l *Lesson, src string) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		p.list = append(p.list, quiz.YAMLError(p.path, p.off, err))
		return
	}
	if len(doc.Content) == 0 {
		p.add(1, "front matter: is empty (needs id, title, summary, objectives, quiz)")
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.yamlf(root, "front matter: expected fields like id: ..., found %s", yamlfield.Describe(root))
		return
	}
	const fm = "front matter"
	m := p.mapping(root, fm, frontFields...)
	for k, v := range m.Values {
		l.lines[k] = v.Line + p.off
	}
	l.ID = m.Text("id", true)
	if l.ID != "" && !quiz.ValidID(l.ID) {
		p.yamlf(m.Values["id"], "front matter: id %q: use lower-case letters, digits and dashes", l.ID)
	}
	l.Title = m.Text("title", true)
	l.Summary = m.Text("summary", true)
	l.QuizID = m.Text("quiz", true)
	l.Objectives = p.texts(m, fm, "objectives", l.lines)
	if len(l.Objectives) == 0 {
		n := root
		if m.Values["objectives"] != nil {
			n = m.Values["objectives"]
		}
		p.yamlf(n, "front matter: objectives: list at least one learning objective")
	}
	l.Prerequisites = p.texts(m, fm, "prerequisites", l.lines)
	l.Experiments = p.texts(m, fm, "experiments", l.lines)
	l.Labs = p.texts(m, fm, "labs", l.lines)
}

// parsePages splits the body (lines from index start on) into pages at
// level-1 headings outside fenced blocks, and pulls out directives.
func parsePages(p *problems, lines []string, start int) []Page {
	var pages []Page
	var body []string
	var fence string // the opening fence ("```", "~~~~"), "" outside a block
	fenceLine := 0
	strayReported := false
	flush := func() {
		if len(pages) == 0 {
			return
		}
		pg := &pages[len(pages)-1]
		pg.Markdown = strings.Trim(strings.Join(body, "\n"), "\n")
		if strings.TrimSpace(pg.Markdown) == "" && len(pg.Checks) == 0 && len(pg.Tries) == 0 {
			p.add(pg.Line, "page %q is empty: write some text under its heading", pg.Title)
		}
		body = nil
	}
	for i := start; i < len(lines); i++ {
		line, num := lines[i], i+1
		if fence != "" {
			if isFenceClose(line, fence) {
				fence = ""
			} else if w := fenceWidth(strings.TrimRight(line, " \t")); w > MaxFenceWidth {
				p.add(num, "line in fenced block is %d columns wide; keep it within %d to fit an 80-column terminal", w, MaxFenceWidth)
			}
			body = append(body, line)
			continue
		}
		if f := fenceOpen(line); f != "" {
			fence, fenceLine = f, num
			body = append(body, line)
			continue
		}
		if title, ok := heading1(line); ok {
			flush()
			if title == "" {
				p.add(num, "page heading has no title")
			}
			pages = append(pages, Page{Title: title, Line: num})
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "@") && directive(p, num, strings.TrimSpace(line), pages) {
			continue
		}
		if len(pages) == 0 {
			if strings.TrimSpace(line) != "" && !strayReported {
				p.add(num, "text before the first page heading (# Title) belongs to no page")
				strayReported = true
			}
			continue
		}
		body = append(body, line)
	}
	if fence != "" {
		p.add(fenceLine, "fenced block opened here is never closed")
	}
	flush()
	if len(pages) == 0 {
		p.add(min(start+1, len(lines)), "the lesson has no pages: start each page with a level-1 heading (# Title)")
	}
	return pages
}

// directive handles a line starting with "@". It reports whether the line
// was a directive (known or a misspelt one), so it is not shown as text.
func directive(p *problems, num int, line string, pages []Page) bool {
	f := strings.Fields(line)
	word := f[0]
	if len(word) < 2 || word[1] < 'a' || word[1] > 'z' {
		return false // "@" followed by something else is ordinary text
	}
	if len(pages) == 0 {
		p.add(num, "directive %s before the first page heading", word)
		return true
	}
	pg := &pages[len(pages)-1]
	switch {
	case word == "@check" && len(f) == 2:
		pg.Checks = append(pg.Checks, f[1])
		pg.checkLines = append(pg.checkLines, num)
	case word == "@check":
		p.add(num, "@check takes one question id: @check QUESTION-ID")
	case word == "@try" && len(f) == 3 && (f[1] == string(TryExperiment) || f[1] == string(TryLab)):
		pg.Tries = append(pg.Tries, Try{Kind: TryKind(f[1]), Name: f[2]})
		pg.tryLines = append(pg.tryLines, num)
	case word == "@try":
		p.add(num, "@try takes a kind and a name: @try experiment NAME or @try lab LAB-ID")
	default:
		p.add(num, "unknown directive %s (known: @check, @try)", word)
	}
	return true
}

// heading1 recognises an ATX level-1 heading: up to three spaces, "#",
// then a space or the end of the line.
func heading1(line string) (string, bool) {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 || !strings.HasPrefix(s, "#") {
		return "", false
	}
	rest := s[1:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // "##..." or "#word"
	}
	title := strings.TrimSpace(rest)
	// An optional closing sequence of #s: "# Title #".
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ")) {
		title = strings.TrimSpace(t)
	}
	return title, true
}

// fenceOpen returns the fence a line opens (three or more ` or ~, indented
// at most three spaces), or "".
func fenceOpen(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 || len(s) < 3 {
		return ""
	}
	c := s[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.Contains(s[n:], "`")) {
		return ""
	}
	return s[:n]
}

// isFenceClose reports whether line closes a block opened with fence: the
// same character, at least as many, nothing after but spaces.
func isFenceClose(line, fence string) bool {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return false
	}
	s = strings.TrimRight(s, " \t")
	if len(s) < len(fence) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != fence[0] {
			return false
		}
	}
	return true
}
