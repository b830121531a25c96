package main

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// An automatic mutant is the reference solution with one small mechanical
// change: an operator swapped, a condition negated or a statement
// deleted. The graders should catch (fail a step on) nearly every one that
// compiles; -mutate measures how many they do. It is a measurement, not
// part of make test: the survivors are where a grader may be too weak (or
// where the change makes no difference, an equivalent mutant).
type mutation struct {
	Start, End int    // byte range of the solution replaced
	Text       string // what replaces it
	Line       int
	Func       string // the function it is in: "F", or "T.M" for a method
	Desc       string // e.g. "< to <= in i < n"
}

// ID names a mutant without its line number, so that an entry of a lab's
// list of equivalent mutants survives edits elsewhere in the file:
// "Worker.member: delete defer defer cancel()", and "... #2" for the
// second identical change in the same function.
func (m mutation) ID() string { return m.Func + ": " + m.Desc }

// swaps are the operator replacements tried on every binary expression.
var swaps = map[token.Token][]token.Token{
	token.LSS:  {token.LEQ},
	token.LEQ:  {token.LSS},
	token.GTR:  {token.GEQ},
	token.GEQ:  {token.GTR},
	token.EQL:  {token.NEQ},
	token.NEQ:  {token.EQL},
	token.LAND: {token.LOR},
	token.LOR:  {token.LAND},
}

// mutations lists the mutants of a Go source file: in function bodies
// only, operator swaps, negated if/for conditions and deleted statements
// (calls, assignments, increments, defers, go statements, sends, breaks
// and continues).
func mutations(src []byte) ([]mutation, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "solution.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	line := func(p token.Pos) int { return fset.Position(p).Line }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	var ms []mutation
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		first := len(ms)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				for _, to := range swaps[n.Op] {
					p := off(n.OpPos)
					ms = append(ms, mutation{Start: p, End: p + len(n.Op.String()), Text: to.String(), Line: line(n.OpPos),
						Desc: fmt.Sprintf("%s to %s in %s", n.Op, to, oneLine(text(n)))})
				}
			case *ast.IfStmt:
				ms = append(ms, negate(n.Cond, off, line, text, "if"))
			case *ast.ForStmt:
				if n.Cond != nil {
					ms = append(ms, negate(n.Cond, off, line, text, "for"))
				}
			case *ast.BlockStmt:
				for _, st := range n.List {
					if desc := deletable(st); desc != "" {
						ms = append(ms, mutation{Start: off(st.Pos()), End: off(st.End()), Text: "", Line: line(st.Pos()),
							Desc: "delete " + desc + " " + oneLine(text(st))})
					}
				}
			case *ast.CaseClause:
				for _, st := range n.Body {
					if desc := deletable(st); desc != "" {
						ms = append(ms, mutation{Start: off(st.Pos()), End: off(st.End()), Text: "", Line: line(st.Pos()),
							Desc: "delete " + desc + " " + oneLine(text(st))})
					}
				}
			case *ast.CommClause:
				for _, st := range n.Body {
					if desc := deletable(st); desc != "" {
						ms = append(ms, mutation{Start: off(st.Pos()), End: off(st.End()), Text: "", Line: line(st.Pos()),
							Desc: "delete " + desc + " " + oneLine(text(st))})
					}
				}
			}
			return true
		})
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			name = recvType(fn.Recv.List[0].Type) + "." + name
		}
		for i := first; i < len(ms); i++ {
			ms[i].Func = name
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Start < ms[j].Start })
	// The same change can occur twice in a function (two "if err != nil"):
	// the second and later ones are numbered, in source order, so that
	// every ID names one mutant.
	seen := map[string]int{}
	for i := range ms {
		id := ms[i].ID()
		seen[id]++
		if n := seen[id]; n > 1 {
			ms[i].Desc += fmt.Sprintf(" #%d", n)
		}
	}
	return ms, nil
}

// recvType is the name of a method's receiver type, without * or type
// parameters.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

func negate(cond ast.Expr, off func(token.Pos) int, line func(token.Pos) int, text func(ast.Node) string, kind string) mutation {
	return mutation{Start: off(cond.Pos()), End: off(cond.End()), Text: "!(" + text(cond) + ")", Line: line(cond.Pos()),
		Desc: fmt.Sprintf("negate %s %s", kind, oneLine(text(cond)))}
}

// deletable says what kind of statement st is when deleting it is a
// mutant worth trying, "" otherwise (declarations and returns: deleting
// them rarely compiles).
func deletable(st ast.Stmt) string {
	switch st := st.(type) {
	case *ast.ExprStmt:
		return "call"
	case *ast.AssignStmt:
		if st.Tok == token.DEFINE {
			return ""
		}
		return "assignment"
	case *ast.IncDecStmt:
		return "increment"
	case *ast.DeferStmt:
		return "defer"
	case *ast.GoStmt:
		return "go statement"
	case *ast.SendStmt:
		return "send"
	case *ast.BranchStmt:
		if st.Tok == token.BREAK || st.Tok == token.CONTINUE {
			return st.Tok.String()
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func (m mutation) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.Text))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Text...)
	return append(out, src[m.End:]...)
}

// mutantOutcome is what grading one automatic mutant gave.
type mutantOutcome int

const (
	mutantKilled      mutantOutcome = iota // a step failed (or the run timed out or crashed)
	mutantSurvived                         // every step passed
	mutantNoCompile                        // the mutant does not compile: not counted
	mutantInfraFailed                      // the grading itself failed: not counted
)

// mutateScore is one lab's automatic-mutation result.
type mutateScore struct {
	ID         string
	Killed     int
	Survived   []mutation
	Equivalent []equivalentMutant // survivors the lab's list explains: not scored
	NoCompile  int
	Errors     []string
	Problems   []string // entries of the list that are stale or wrong
	Elapsed    time.Duration
}

// total is the score's denominator: the reviewed equivalent mutants are
// left out (no test can tell them from the solution).
func (s mutateScore) total() int { return s.Killed + len(s.Survived) }

// equivalentMutant is a surviving mutant with the reason it was judged
// equivalent.
type equivalentMutant struct {
	M      mutation
	Reason string
}

// equivalentFile lists a lab's reviewed equivalent mutants: mutants of
// the reference solution that behave exactly like it, so no test can
// fail on them. One line per mutant, "ID -- reason", where ID is what
// -mutate prints after the line number ("Worker.member: delete defer
// defer cancel()"); blank lines and lines starting with # are comments.
// A matching mutant that survives is reported as "equivalent (reviewed)"
// and left out of the score; an entry that matches no mutant is stale, and
// one whose mutant a test kills is wrong: both are reported as problems.
const equivalentFile = "testdata/equivalent.txt"

// equivalentEntry is one line of a lab's equivalentFile.
type equivalentEntry struct {
	ID, Reason string
	Line       int
}

// readEquivalents reads a lab's list of equivalent mutants; a lab without
// one has none.
func readEquivalents(path string) ([]equivalentEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []equivalentEntry
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		id, reason, ok := strings.Cut(l, " -- ")
		id, reason = strings.TrimSpace(id), strings.TrimSpace(reason)
		if !ok || id == "" || reason == "" {
			return nil, fmt.Errorf("%s:%d: want \"ID -- reason\", got %q", path, i+1, l)
		}
		out = append(out, equivalentEntry{ID: id, Reason: reason, Line: i + 1})
	}
	return out, nil
}

// runMutate generates every automatic mutant of each lab's solution,
// grades them (parallel workers, each with its own test binaries) and
// prints the score per lab and for labs 05-09 together.
func runMutate(ctx context.Context, cfg config, ids []string, workers int, stdout, stderr io.Writer) int {
	scores := make([]mutateScore, len(ids))
	var jobs []mutantJob
	tmp, err := os.MkdirTemp("", "labcheck-mutate-")
	if err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	for i, id := range ids {
		scores[i].ID = id
		js, err := labMutants(cfg, i, id, tmp, &scores[i])
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %s: %v\n", id, err)
			return 1
		}
		jobs = append(jobs, js...)
	}
	fmt.Fprintf(stderr, "labcheck: %d automatic mutants of %d labs, %d at a time\n", len(jobs), len(ids), workers)
	start := time.Now()
	gradeMutants(ctx, cfg, ids, jobs, workers, tmp, scores)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "labcheck: interrupted")
		return 1
	}
	writeMutateReport(stdout, scores, time.Since(start))
	for _, s := range scores {
		if len(s.Problems) > 0 {
			return 1
		}
	}
	return 0
}

// mutantJob is one mutant to grade.
type mutantJob struct {
	lab   int // its lab's index in the scores
	m     mutation
	stub  string
	file  string // the mutant source, written by the worker
	src   []byte
	tests []string
	equiv string // why the lab's list says it is equivalent ("" if it does not)
}

// labMutants lists the mutants of lab id's solution (the i-th lab),
// their sources to be written under tmp; a stale entry of the lab's
// equivalent list is a problem of its score.
func labMutants(cfg config, i int, id, tmp string, score *mutateScore) ([]mutantJob, error) {
	dir := cfg.labsDir(id)
	data, err := os.ReadFile(filepath.Join(dir, "lab.yaml"))
	if err != nil {
		return nil, err
	}
	lab, _ := lessons.ParseLab(id+"/lab.yaml", id, data, nil)
	if lab == nil || lab.File == "" {
		return nil, errors.New("lab.yaml names no file")
	}
	tests, err := stepTests(dir)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(filepath.Join(cfg.Root, "solutions", id, lab.File))
	if err != nil {
		return nil, err
	}
	ms, err := mutations(src)
	if err != nil {
		return nil, fmt.Errorf("parse the solution: %w", err)
	}
	equiv, err := readEquivalents(filepath.Join(cfg.Root, "solutions", id, equivalentFile))
	if err != nil {
		return nil, err
	}
	reasons := map[string]string{}
	for _, e := range equiv {
		reasons[e.ID] = e.Reason
		if !slices.ContainsFunc(ms, func(m mutation) bool { return m.ID() == e.ID }) {
			score.Problems = append(score.Problems, fmt.Sprintf("stale entry (line %d of %s): no mutant %q", e.Line, equivalentFile, e.ID))
		}
	}
	var jobs []mutantJob
	for k, m := range ms {
		jobs = append(jobs, mutantJob{lab: i, m: m, stub: filepath.Join("labs", id, lab.File),
			file: filepath.Join(tmp, fmt.Sprintf("%s-%03d.go", id, k)), src: src, tests: tests, equiv: reasons[m.ID()]})
	}
	return jobs, nil
}

// gradeMutants grades jobs, workers at a time (each with its test
// binaries in a folder of its own under tmp), into scores; it stops
// handing out jobs once ctx ends.
func gradeMutants(ctx context.Context, cfg config, ids []string, jobs []mutantJob, workers int, tmp string, scores []mutateScore) {
	var mu sync.Mutex
	next := make(chan mutantJob)
	var wg sync.WaitGroup
	done := 0
	for w := range workers {
		binDir := filepath.Join(tmp, fmt.Sprintf("bin%d", w))
		wg.Go(func() {
			for j := range next {
				started := time.Now()
				outcome, msg := gradeMutant(ctx, cfg, binDir, j.stub, j.file, j.m.apply(j.src), j.tests)
				mu.Lock()
				scores[j.lab].record(j, outcome, msg, time.Since(started))
				done++
				if cfg.Log != nil {
					cfg.Log("%d/%d %s line %d %s: %v", done, len(jobs), ids[j.lab], j.m.Line, j.m.Desc, outcome)
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
}

// record counts how the grading of j ended, which took elapsed.
func (s *mutateScore) record(j mutantJob, outcome mutantOutcome, msg string, elapsed time.Duration) {
	s.Elapsed += elapsed
	switch {
	case outcome == mutantSurvived && j.equiv != "":
		s.Equivalent = append(s.Equivalent, equivalentMutant{M: j.m, Reason: j.equiv})
	case outcome == mutantKilled && j.equiv != "":
		s.Killed++
		s.Problems = append(s.Problems, fmt.Sprintf("line %d: %q is listed in %s as equivalent, but a test kills it: remove the entry", j.m.Line, j.m.ID(), equivalentFile))
	case outcome == mutantKilled:
		s.Killed++
	case outcome == mutantSurvived:
		s.Survived = append(s.Survived, j.m)
	case outcome == mutantNoCompile:
		s.NoCompile++
	case outcome == mutantInfraFailed:
		s.Errors = append(s.Errors, fmt.Sprintf("line %d %s: %s", j.m.Line, j.m.Desc, msg))
	}
}

// gradeMutant grades one mutant without the race detector.
func gradeMutant(ctx context.Context, cfg config, binDir, stub, file string, src []byte, tests []string) (mutantOutcome, string) {
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return mutantInfraFailed, err.Error()
	}
	defer os.Remove(file)
	id := filepath.Base(filepath.Dir(stub))
	o := cfg.options(id)
	o.BinDir = binDir
	o.Overlay = cfg.overlay(map[string]string{stub: file})
	o.Timeout = mutateTimeout
	o.FailFast = true // one failing step is enough
	res, err := grade.Run(ctx, o)
	if err != nil {
		return mutantInfraFailed, err.Error()
	}
	if res.BuildFailed {
		return mutantNoCompile, res.Message
	}
	for _, s := range res.Steps(tests) {
		if s.Status != grade.Pass {
			return mutantKilled, ""
		}
	}
	if !res.Passed {
		return mutantKilled, res.Message
	}
	return mutantSurvived, ""
}

// mutateTimeout bounds one mutant's run: a mutant that makes a step hang
// is caught (the learner would see the timeout), and need not wait long.
const mutateTimeout = 20 * time.Second

func writeMutateReport(w io.Writer, scores []mutateScore, took time.Duration) {
	fmt.Fprintf(w, "%-16s %-8s %-8s %-10s %-11s %-8s %s\n", "lab", "killed", "total", "score", "equivalent", "skipped", "seconds")
	var etcdKilled, etcdTotal, allKilled, allTotal int
	for _, s := range scores {
		fmt.Fprintf(w, "%-16s %-8d %-8d %-10s %-11d %-8d %.0f\n", s.ID, s.Killed, s.total(), pct(s.Killed, s.total()), len(s.Equivalent), s.NoCompile, s.Elapsed.Seconds())
		allKilled += s.Killed
		allTotal += s.total()
		if s.ID >= "05" && s.ID < "10" {
			etcdKilled += s.Killed
			etcdTotal += s.total()
		}
	}
	fmt.Fprintf(w, "all labs: %d of %d mutants killed (%s)\n", allKilled, allTotal, pct(allKilled, allTotal))
	if etcdTotal > 0 {
		verdict := "ok"
		if etcdKilled*100 < 90*etcdTotal {
			verdict = "BELOW the 90% bar"
		}
		fmt.Fprintf(w, "labs 05-09 together: %d of %d killed (%s), bar 90%%: %s\n", etcdKilled, etcdTotal, pct(etcdKilled, etcdTotal), verdict)
	}
	fmt.Fprintf(w, "(mutants that do not compile are skipped; reviewed equivalent ones, listed in solutions/<lab>/%s, are not scored; %0.f s in all)\n", equivalentFile, took.Seconds())
	for _, s := range scores {
		for _, m := range s.Survived {
			fmt.Fprintf(w, "%s: survived: line %d: %s\n", s.ID, m.Line, m.ID())
		}
		for _, e := range s.Equivalent {
			fmt.Fprintf(w, "%s: equivalent (reviewed): line %d: %s -- %s\n", s.ID, e.M.Line, e.M.ID(), e.Reason)
		}
		for _, p := range s.Problems {
			fmt.Fprintf(w, "%s: problem: %s\n", s.ID, p)
		}
		for _, e := range s.Errors {
			fmt.Fprintf(w, "%s: could not grade: %s\n", s.ID, e)
		}
	}
}

func pct(n, total int) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(total))
}
