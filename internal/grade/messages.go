package grade

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"

	"github.com/ownership-election/playground/internal/sentence"
)

// tidyFailure rewrites the failure lines of a test whose end was one of
// the testing machinery's own panics, which read as being about the
// grader rather than about the learner's code:
//
//   - a synctest deadlock (every goroutine in the bubble blocked) becomes
//     "your code blocked forever in step N" and the goroutine of the
//     learner's code that is stuck, instead of a dump of every goroutine;
//   - "test executed panic(nil) or runtime.Goexit" (a check in the grader
//     stopped the test from a subtest) is dropped with its goroutine
//     dump: the check's own message above it is what matters;
//   - the stall guard's panic (labs/internal/labtest.Bubble: the fake
//     clock could never move again) keeps its report, without the
//     "panic: labtest:" framing and without the guard's own stack.
//
// What the test printed before the panic (its own messages) stays first.
func tidyFailure(test string, lines []string) []string {
	at := -1
	kind := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "panic: deadlock: ") || strings.HasPrefix(t, "fatal error: deadlock: ") ||
			strings.HasPrefix(t, "panic: synctest: deadlock") || strings.Contains(t, "main bubble goroutine has exited but blocked goroutines remain"):
			kind = "deadlock"
		case strings.Contains(t, "test executed panic(nil) or runtime.Goexit"):
			kind = "goexit"
		case strings.HasPrefix(t, stallPrefix):
			kind = "stall"
		case t == "SIGQUIT: quit":
			kind = "quit"
		default:
			continue
		}
		at = i
		break
	}
	if at < 0 {
		return lines
	}
	before := trimBlank(lines[:at])
	out := append([]string{}, before...)
	switch kind {
	case "deadlock":
		out = append(out, fmt.Sprintf("Your code blocked forever in %s: every goroutine of the test was waiting for another, so nothing could ever wake them (a channel nobody sends on or closes, a WaitGroup that never reaches zero, a wait for an event that never comes).", StepName(test)))
		if g := stuckGoroutine(lines[at+1:]); len(g) > 0 {
			out = append(out, "Where your code is stuck:")
			out = append(out, g...)
		}
	case "stall":
		why, _ := stallWhy(strings.TrimSpace(lines[at]))
		out = append(out, why)
		// The report goes on in tab-indented lines up to a blank line;
		// what follows is the guard's own goroutine.
		for _, l := range lines[at+1:] {
			if strings.TrimSpace(l) == "" {
				break
			}
			out = append(out, strings.TrimPrefix(l, "\t"))
		}
	case "quit":
		// The grader asked the binary for its stacks when the step ran
		// out of time (runclock.go): of the dump, only the learner's
		// code is news.
		if g := learnerGoroutine(lines[at+1:], true); len(g) > 0 {
			out = append(out, "Where your code was when the time ran out:")
			out = append(out, g...)
		}
	case "goexit":
		if len(before) == 0 {
			out = append(out, fmt.Sprintf("%s stopped early without saying why (a check in the grader gave up on the whole step).", StepName(test)))
		} else {
			out = append(out, "(the check above stopped the whole step)")
		}
	}
	return out
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// goroutine is one block of a goroutine dump.
type goroutine struct {
	header string
	frames [][2]string // function line, file:line line
}

func parseGoroutines(lines []string) []goroutine {
	var gs []goroutine
	var cur *goroutine
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(l, ":"):
			gs = append(gs, goroutine{header: l})
			cur = &gs[len(gs)-1]
		case cur == nil || l == "":
		case strings.HasPrefix(l, "created by "):
			file := ""
			if i+1 < len(lines) {
				file = strings.TrimSpace(lines[i+1])
				i++
			}
			cur.frames = append(cur.frames, [2]string{l, file})
		default:
			file := ""
			if i+1 < len(lines) && strings.Contains(lines[i+1], ".go:") {
				file = strings.TrimSpace(lines[i+1])
				i++
			}
			cur.frames = append(cur.frames, [2]string{l, file})
		}
	}
	return gs
}

// learnerFile reports whether a frame's file is the learner's lab code
// (or a solution overlaid on it), not a test, the harness or the
// standard library.
func learnerFile(file string) bool {
	f := strings.Fields(file)
	if len(f) == 0 {
		return false
	}
	file = f[0]
	if strings.HasSuffix(stripLine(file), "_test.go") || strings.Contains(file, "/labs/internal/") || strings.Contains(file, "/pkg/mod/") {
		return false
	}
	if root := runtime.GOROOT(); root != "" && strings.HasPrefix(file, root+"/") {
		return false
	}
	return strings.Contains(file, "/labs/") || strings.Contains(file, "/solutions/") || strings.Contains(file, "labcheck-")
}

func stripLine(file string) string {
	if i := strings.LastIndex(file, ".go:"); i >= 0 {
		return file[:i+3]
	}
	return file
}

// stuckGoroutine picks from a deadlock's goroutine dump the goroutine
// blocked in the learner's code and returns it indented, with only its
// top frame (where it waits) and the frames of the learner's code.
func stuckGoroutine(dump []string) []string { return learnerGoroutine(dump, false) }

// learnerGoroutine is the first goroutine of dump with a frame in the
// learner's code, trimmed to those frames; running ones only with
// running set (in a deadlock report, the running goroutine is the
// reporter's).
func learnerGoroutine(dump []string, running bool) []string {
	gs := parseGoroutines(dump)
	pick := -1
	for i, g := range gs {
		if !running && strings.Contains(g.header, "[running]") {
			continue
		}
		for _, f := range g.frames {
			if !strings.HasPrefix(f[0], "created by ") && learnerFile(f[1]) {
				pick = i
				break
			}
		}
		if pick >= 0 {
			break
		}
	}
	if pick < 0 {
		return nil
	}
	g := gs[pick]
	header := g.header
	if i := strings.Index(header, ", synctest bubble"); i >= 0 {
		header = header[:i] + "]:"
	}
	// A dump asked for by a signal names each goroutine's g and m.
	header = runtimeIDs.ReplaceAllString(header, "")
	out := []string{"  " + header}
	for i, f := range g.frames {
		if strings.HasPrefix(f[0], "created by ") {
			continue
		}
		if i == 0 || learnerFile(f[1]) {
			out = append(out, "    "+f[0], "        "+shortFile(f[1]))
		}
	}
	return out
}

// runtimeIDs matches the runtime's ids in a goroutine header
// (" gp=0xc000... m=0 mp=0x6d6e80").
var runtimeIDs = regexp.MustCompile(` (?:gp|m|mp)=\S+`)

// shortFile drops the "+0x1a" offset of a frame's file line.
func shortFile(file string) string {
	if i := strings.Index(file, " +0x"); i >= 0 {
		return file[:i]
	}
	return file
}

// stallPrefix starts the panic with which labs/internal/labtest's stall
// guard ends a bubble whose fake clock can never move again:
// "panic: labtest: <test> is stuck: <why>", then the report's other lines.
// labtest cannot be imported from here (it is internal to labs/); its
// tests check the same text.
const (
	stallPrefix = "panic: labtest: "
	stallSep    = " is stuck: "
)

// stallWhy returns the <why> of a stall guard's panic line.
func stallWhy(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, stallPrefix)
	if !ok {
		return "", false
	}
	_, why, ok := strings.Cut(rest, stallSep)
	return why, ok
}

// mapRace looks in lines for the runtime's own check on maps, which ends
// the program at once, with or without the race detector, when two
// goroutines use one map at the same time ("fatal error: concurrent map
// writes", "... map read and map write", "... map iteration and map
// write"). That is a data race in the learner's code, not a crash of the
// grader: it returns a sentence saying so, with the first frame of the
// learner's code in the failing goroutine, and true.
func mapRace(lines []string) (string, bool) {
	for i, l := range lines {
		fatal := strings.TrimSpace(l)
		if !strings.HasPrefix(fatal, "fatal error: concurrent map ") {
			continue
		}
		where := ""
		for _, next := range lines[i+1:] {
			if t := strings.TrimSpace(next); strings.Contains(t, ".go:") && learnerFile(t) {
				where = shortFile(t)
				break
			}
		}
		msg := fmt.Sprintf("a data race on a map: two goroutines used the same map at the same time, and the Go runtime stopped the program (%q)", fatal)
		if where != "" {
			msg += ", at " + where
		}
		return msg + ". Every access to a map that goroutines share, reads included, must hold the same lock", true
	}
	return "", false
}

// raceAccess is one access of a race detector report: "Read at 0x... by
// goroutine 7:" and its stack.
type raceAccess struct {
	what   string // "read", "previous write", ...
	by     string // "goroutine 7"
	frames [][2]string
}

// raceAccesses parses the two accesses of the first race report in lines,
// with the report's lines (from the WARNING to the closing rule).
func raceAccesses(lines []string) (acc []raceAccess, report []string) {
	start := -1
	for i, l := range lines {
		if strings.Contains(l, "WARNING: DATA RACE") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, nil
	}
	var cur *raceAccess
	for i := start; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		report = append(report, lines[i])
		if i > start && t == "==================" {
			break
		}
		if what, by, ok := accessHeader(t); ok {
			acc = append(acc, raceAccess{what: what, by: by})
			cur = &acc[len(acc)-1]
			continue
		}
		if strings.HasSuffix(t, ":") || t == "" {
			cur = nil // "Goroutine 7 (running) created at:", or the end of a stack
			continue
		}
		if cur != nil && i+1 < len(lines) && strings.Contains(lines[i+1], ".go:") {
			cur.frames = append(cur.frames, [2]string{t, strings.TrimSpace(lines[i+1])})
			report = append(report, lines[i+1])
			i++
		}
	}
	return acc, report
}

// accessHeader reads "Previous write at 0x00c000012345 by goroutine 8:".
func accessHeader(t string) (what, by string, ok bool) {
	at := strings.Index(t, " at 0x")
	byAt := strings.Index(t, " by ")
	if at < 0 || byAt < at || !strings.HasSuffix(t, ":") {
		return "", "", false
	}
	what = strings.ToLower(t[:at])
	if !strings.HasSuffix(what, "read") && !strings.HasSuffix(what, "write") {
		return "", "", false
	}
	return what, strings.TrimSuffix(t[byAt+4:], ":"), true
}

// where names an access by its first frame in the learner's code, else
// its first frame outside the runtime: "(*Store).lookup at cas.go:20".
func (a raceAccess) where() string {
	pick := -1
	for i, f := range a.frames {
		if learnerFile(f[1]) {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, f := range a.frames {
			if !strings.HasPrefix(f[0], "runtime.") && !strings.HasPrefix(f[0], "sync.") && !strings.HasPrefix(f[0], "internal/") {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return ""
	}
	fn := a.frames[pick][0]
	if i := strings.LastIndex(fn, "("); i > 0 && strings.HasSuffix(fn, ")") {
		fn = fn[:i]
	}
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		fn = fn[i+1:]
	}
	if _, rest, ok := strings.Cut(fn, "."); ok {
		fn = rest
	}
	return fmt.Sprintf("%s at %s", fn, baseFile(shortFile(a.frames[pick][1])))
}

// baseFile drops the folders of a "/path/to/cas.go:20" frame line.
func baseFile(file string) string {
	if i := strings.LastIndex(file, "/"); i >= 0 {
		return file[i+1:]
	}
	return file
}

// raceReport is the first race report in lines with each access's stack
// reordered so that the learner's frames come first, marked "(your code)".
func raceReport(lines []string) []string {
	acc, report := raceAccesses(lines)
	if len(acc) == 0 {
		return report
	}
	out := []string{strings.TrimSpace(report[0])}
	for _, a := range acc {
		out = append(out, "", fmt.Sprintf("%s by %s:", sentence.Capitalize(a.what), a.by))
		var mine, rest []string
		for _, f := range a.frames {
			fn := f[0]
			if i := strings.LastIndex(fn, "/"); i >= 0 {
				fn = fn[i+1:] // the package's path is in the file's
			}
			if learnerFile(f[1]) {
				mine = append(mine, "  "+fn+"   (your code)", "      "+shortFile(f[1]))
			} else {
				rest = append(rest, "  "+fn, "      "+shortFile(f[1]))
			}
		}
		out = append(append(out, mine...), rest...)
	}
	out = append(out, "", "The race detector's own report, as it printed it:")
	return append(out, report...)
}

// raceSummary names the two conflicting accesses of the first race
// report, each where the learner's code makes it.
func raceSummary(res *Result) string {
	lines := res.allLines()
	step := ""
	for _, t := range res.Tests {
		if t.Fails > 0 {
			step = " in " + StepName(t.Name)
			break
		}
	}
	if acc, _ := raceAccesses(lines); len(acc) > 0 {
		var parts []string
		for _, a := range acc {
			if w := a.where(); w != "" {
				parts = append(parts, fmt.Sprintf("%s in %s (%s)", a.what, w, a.by))
			}
		}
		if len(parts) > 0 {
			return fmt.Sprintf("a data race%s: two goroutines touch the same memory without a common lock: %s. Both must hold the same lock; a read needs it as much as a write", step, strings.Join(parts, "; "))
		}
		return fmt.Sprintf("a data race%s: two goroutines touch the same memory without synchronization", step)
	}
	if why, ok := mapRace(lines); ok {
		for _, t := range res.Tests {
			if t.Fails > 0 {
				return StepName(t.Name) + ": " + why
			}
		}
		return why
	}
	return "the race detector reported a data race"
}
