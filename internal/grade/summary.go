package grade

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// testLine matches a line a test printed with t.Log or t.Error: the test
// file's base name and the line of the call.
var testLine = regexp.MustCompile(`^\s*([\w.-]+_test\.go):(\d+): `)

var (
	logCall  = regexp.MustCompile(`\.Logf?\(`)
	failCall = regexp.MustCompile(`\.(Errorf?|Fatalf?|Fail|FailNow|Skipf?|SkipNow)\(`)
)

// logIndex tells the lines a test logged (t.Log, t.Logf) from its failing
// assertions: the two print alike, so it looks at the call in the test's
// source. A line it cannot place counts as an assertion.
type logIndex struct {
	read  func(name string) []byte
	files map[string][]string
}

func (x *logIndex) isLog(line string) bool {
	m := testLine.FindStringSubmatch(line)
	if m == nil || x.read == nil {
		return false
	}
	if x.files == nil {
		x.files = map[string][]string{}
	}
	src, ok := x.files[m[1]]
	if !ok {
		src = strings.Split(string(x.read(m[1])), "\n")
		x.files[m[1]] = src
	}
	n, _ := strconv.Atoi(m[2])
	if n < 1 || n > len(src) {
		return false
	}
	call := src[n-1]
	return logCall.MatchString(call) && !failCall.MatchString(call)
}

// summarize fills t.Summary from t.Failure and, when the summary says
// more than the failure's first line (several failing subtests, or a
// logged line printed before the failure), puts it first in Failure.
func (t *Test) summarize(isLog func(string) bool) {
	if t.Status != Fail || len(t.Failure) == 0 {
		return
	}
	failing := failingSubtests(t.Failure)
	if len(failing) == 0 {
		if l := firstAssertion(t.Failure, isLog); l != "" {
			t.Summary = []string{l}
		}
	}
	for _, name := range failing {
		title := strings.ReplaceAll(strings.TrimPrefix(name, t.Name+"/"), "_", " ")
		first := firstAssertion(subtestBlock(t.Failure, name), isLog)
		if first == "" {
			first = "failed without a message"
		}
		t.Summary = append(t.Summary, title+": "+first)
	}
	if len(t.Summary) > 1 || (len(t.Summary) == 1 && t.Summary[0] != firstMessage(t.Failure)) {
		t.Failure = append(append(append([]string{}, t.Summary...), ""), t.Failure...)
	}
}

// failingSubtests lists, in order, the subtests whose "--- FAIL" line is in
// lines and none of whose own subtests failed (a parent fails with its
// child; the child says why).
func failingSubtests(lines []string) []string {
	var names []string
	for _, l := range lines {
		if name, ok := failVerdict(l); ok && strings.Contains(name, "/") {
			names = append(names, name)
		}
	}
	var leaves []string
	for _, n := range names {
		leaf := true
		for _, other := range names {
			if strings.HasPrefix(other, n+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			leaves = append(leaves, n)
		}
	}
	return leaves
}

// failVerdict reads a "--- FAIL: Name (0.00s)" line.
func failVerdict(line string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: ")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	return name, true
}

// subtestBlock is what subtest name printed: the lines after its verdict
// up to the next verdict.
func subtestBlock(lines []string, name string) []string {
	for i, l := range lines {
		if n, ok := failVerdict(l); ok && n == name {
			rest := lines[i+1:]
			for j, next := range rest {
				if _, ok := failVerdict(next); ok {
					return rest[:j]
				}
			}
			return rest
		}
	}
	return nil
}

// firstAssertion is the first line of lines worth a summary that the test
// did not merely log; a logged message's continuation lines (no file:line
// of their own) are skipped with it.
func firstAssertion(lines []string, isLog func(string) bool) string {
	inLog := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "=== ") {
			continue
		}
		if testLine.MatchString(l) {
			inLog = isLog(l)
		}
		if !inLog {
			return t
		}
	}
	return ""
}

// testSource returns a reader of the package's test files by base name,
// honouring the overlay, for logIndex.
func (o Options) testSource() func(name string) []byte {
	dir := filepath.Join(o.Dir, filepath.FromSlash(strings.TrimPrefix(o.pkg(), "./")))
	return func(name string) []byte {
		path := filepath.Join(dir, name)
		for from, to := range o.Overlay {
			f := from
			if !filepath.IsAbs(f) {
				f = filepath.Join(o.Dir, f)
			}
			if filepath.Clean(f) == path && to != "" {
				if !filepath.IsAbs(to) {
					to = filepath.Join(o.Dir, to)
				}
				path = to
			}
		}
		data, _ := os.ReadFile(path)
		return data
	}
}
