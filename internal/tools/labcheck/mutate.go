package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
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
	Desc       string // e.g. "< to <="
}

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
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				for _, to := range swaps[n.Op] {
					p := off(n.OpPos)
					ms = append(ms, mutation{Start: p, End: p + len(n.Op.String()), Text: to.String(), Line: line(n.OpPos),
						Desc: fmt.Sprintf("%s to %s", n.Op, to)})
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
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Start < ms[j].Start })
	return ms, nil
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
	ID        string
	Killed    int
	Survived  []mutation
	NoCompile int
	Errors    []string
	Elapsed   time.Duration
}

func (s mutateScore) total() int { return s.Killed + len(s.Survived) }

// runMutate generates every automatic mutant of each lab's solution,
// grades them (parallel workers, each with its own test binaries) and
// prints the score per lab and for labs 05-09 together.
func runMutate(ctx context.Context, cfg config, ids []string, workers int, stdout, stderr io.Writer) int {
	type job struct {
		lab   int
		m     mutation
		stub  string
		file  string // the mutant source, written by the worker
		src   []byte
		tests []string
	}
	scores := make([]mutateScore, len(ids))
	var jobs []job
	tmp, err := os.MkdirTemp("", "labcheck-mutate-")
	if err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	for i, id := range ids {
		scores[i].ID = id
		dir := cfg.labsDir(id)
		data, err := os.ReadFile(filepath.Join(dir, "lab.yaml"))
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %s: %v\n", id, err)
			return 1
		}
		lab, _ := lessons.ParseLab(id+"/lab.yaml", id, data, nil)
		if lab == nil || lab.File == "" {
			fmt.Fprintf(stderr, "labcheck: %s: lab.yaml names no file\n", id)
			return 1
		}
		tests, err := stepTests(dir)
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %s: %v\n", id, err)
			return 1
		}
		src, err := os.ReadFile(filepath.Join(cfg.Root, "solutions", id, lab.File))
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %s: %v\n", id, err)
			return 1
		}
		ms, err := mutations(src)
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %s: parse the solution: %v\n", id, err)
			return 1
		}
		for k, m := range ms {
			jobs = append(jobs, job{lab: i, m: m, stub: filepath.Join("labs", id, lab.File),
				file: filepath.Join(tmp, fmt.Sprintf("%s-%03d.go", id, k)), src: src, tests: tests})
		}
	}
	fmt.Fprintf(stderr, "labcheck: %d automatic mutants of %d labs, %d at a time\n", len(jobs), len(ids), workers)
	start := time.Now()
	var mu sync.Mutex
	next := make(chan job)
	var wg sync.WaitGroup
	done := 0
	for w := range workers {
		binDir := filepath.Join(tmp, fmt.Sprintf("bin%d", w))
		wg.Go(func() {
			for j := range next {
				started := time.Now()
				outcome, msg := gradeMutant(ctx, cfg, binDir, j.stub, j.file, j.m.apply(j.src), j.tests)
				mu.Lock()
				s := &scores[j.lab]
				s.Elapsed += time.Since(started)
				switch outcome {
				case mutantKilled:
					s.Killed++
				case mutantSurvived:
					s.Survived = append(s.Survived, j.m)
				case mutantNoCompile:
					s.NoCompile++
				case mutantInfraFailed:
					s.Errors = append(s.Errors, fmt.Sprintf("line %d %s: %s", j.m.Line, j.m.Desc, msg))
				}
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
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "labcheck: interrupted")
		return 1
	}
	writeMutateReport(stdout, scores, time.Since(start))
	return 0
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
	fmt.Fprintf(w, "%-16s %-8s %-8s %-10s %-8s %s\n", "lab", "killed", "total", "score", "skipped", "seconds")
	var etcdKilled, etcdTotal, allKilled, allTotal int
	for _, s := range scores {
		fmt.Fprintf(w, "%-16s %-8d %-8d %-10s %-8d %.0f\n", s.ID, s.Killed, s.total(), pct(s.Killed, s.total()), s.NoCompile, s.Elapsed.Seconds())
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
	fmt.Fprintf(w, "(mutants that do not compile are skipped; %0.f s in all)\n", took.Seconds())
	for _, s := range scores {
		for _, m := range s.Survived {
			fmt.Fprintf(w, "%s: survived: line %d: %s\n", s.ID, m.Line, m.Desc)
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
