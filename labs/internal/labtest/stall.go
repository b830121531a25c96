package labtest

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// StallBudget is how long (of real time) a bubble run by Bubble may go
// without progress before the guard gives up on it. A grader's bubble
// runs minutes of fake time in milliseconds, so a few seconds without a
// single step forward means the fake clock has stopped for good.
const StallBudget = 5 * time.Second

// stallBudgetEnv lowers StallBudget for labtest's own tests.
const stallBudgetEnv = "LABTEST_STALL_BUDGET"

func stallBudget() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(stallBudgetEnv)); err == nil && d > 0 {
		return d
	}
	return StallBudget
}

// Hint is what the stall report says first when the goroutine found
// running without ever blocking is in the learner's function Func (the
// end of its name as a stack trace shows it, such as "(*Lease).Run").
type Hint struct {
	Func string
	Says string
}

// progress counts the steps forward of the bubble being guarded.
var progress atomic.Int64

// Progress tells the guard of the running bubble that the test moved on
// (the learner's code sent a request, a check passed). A grader's probes
// call it; the guard only fires after StallBudget without any. The count
// is shared by the whole test binary: graders do not run tests in
// parallel.
func Progress() { progress.Add(1) }

// Bubble runs f in a testing/synctest bubble, as synctest.Test does,
// guarded from outside against a bubble that can never move on.
//
// Inside a bubble the fake clock moves only when every goroutine in it
// is blocked on something durable (a channel, a timer, a select without a
// default case). A goroutine of the learner's that runs a loop without
// ever waiting, or that waits for a sync.Mutex nobody unlocks, stops the
// clock for good: the test sleeps forever, and without this guard only
// the binary's timeout ends it, with a dump of every goroutine. When the
// bubble makes no progress (see Progress) for StallBudget, the guard
// panics with a report that names the test, says what the stuck
// goroutine of the learner's code is doing (and hints's Says for its
// function), and shows where it is. The panic ends the test binary: a
// goroutine that never blocks cannot be stopped any other way.
//
// With -timeout 0 (no timeout, as when stepping through the code in a
// debugger, where a breakpoint stops every goroutine and real time runs
// on) there is no guard either.
func Bubble(t *testing.T, f func(t *testing.T), hints ...Hint) {
	t.Helper()
	if fl := flag.Lookup("test.timeout"); fl != nil && fl.Value.String() == "0s" {
		synctest.Test(t, f)
		return
	}
	pkg := callerPackage()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { // outside the bubble: real time
		defer close(stopped)
		watch(t.Name(), pkg, hints, done)
	}()
	defer func() {
		close(done)
		<-stopped
	}()
	synctest.Test(t, f)
}

// watch fires when progress has not moved for the stall budget.
func watch(test, pkg string, hints []Hint, done <-chan struct{}) {
	budget := stallBudget()
	tick := time.NewTicker(budget / 10)
	defer tick.Stop()
	last, since := progress.Load(), time.Now()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if n := progress.Load(); n != last {
			last, since = n, time.Now()
			continue
		}
		if time.Since(since) < budget {
			continue
		}
		select {
		case <-done:
			return
		default:
		}
		panic(stallReport(test, pkg, budget, hints, allStacks()))
	}
}

// callerPackage is the import path of the package of Bubble's caller (the
// lab's test, which is in the learner's package) followed by ".".
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return ""
	}
	name := fn.Name() // example.com/labs/03_lease.TestStep3_X.func1
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	return name[:slash+1+dot+1]
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stack is one goroutine of a dump.
type stack struct {
	header string      // goroutine 23 [runnable, synctest bubble 1]:
	state  string      // runnable
	frames [][2]string // function line, file:line
}

func parseStacks(dump string) []stack {
	var out []stack
	for _, block := range strings.Split(dump, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		s := stack{header: lines[0]}
		if i, j := strings.Index(lines[0], "["), strings.Index(lines[0], "]"); i >= 0 && j > i {
			s.state, _, _ = strings.Cut(lines[0][i+1:j], ",")
		}
		for k := 1; k < len(lines); k++ {
			fn := strings.TrimSpace(lines[k])
			file := ""
			if k+1 < len(lines) && strings.HasPrefix(lines[k+1], "\t") {
				file = strings.TrimSpace(lines[k+1])
				if i := strings.Index(file, " +0x"); i >= 0 {
					file = file[:i]
				}
				k++
			}
			s.frames = append(s.frames, [2]string{fn, file})
		}
		out = append(out, s)
	}
	return out
}

// learnerFrame is the first frame of s in the learner's code: a function
// of the lab's package in a file that is not a test.
func (s stack) learnerFrame(pkg string) (fn, file string, ok bool) {
	for _, f := range s.frames {
		if strings.HasPrefix(f[0], "created by ") {
			continue
		}
		if pkg != "" && strings.HasPrefix(f[0], pkg) && !strings.Contains(stripLine(f[1]), "_test.go") {
			return strings.TrimPrefix(f[0], pkg), f[1], true
		}
	}
	return "", "", false
}

func stripLine(file string) string {
	if i := strings.LastIndex(file, ".go:"); i >= 0 {
		return file[:i+3]
	}
	return file
}

// funcName drops the argument list of a frame's function line.
func funcName(fn string) string {
	if i := strings.LastIndex(fn, "("); i > 0 && strings.HasSuffix(fn, ")") {
		return fn[:i]
	}
	return fn
}

func baseFile(file string) string {
	if i := strings.LastIndex(file, "/"); i >= 0 {
		return file[i+1:]
	}
	return file
}

// stallReport says why the bubble of test stopped moving. Its first line
// is what a summary shows: "labtest: <test> is stuck: <why>".
func stallReport(test, pkg string, budget time.Duration, hints []Hint, dump string) string {
	var learners []stack // the bubble's goroutines in the learner's code
	spinning, locked := -1, -1
	for _, s := range parseStacks(dump) {
		if !strings.Contains(s.header, "synctest bubble") {
			continue
		}
		if _, _, ok := s.learnerFrame(pkg); !ok {
			continue
		}
		switch {
		case (s.state == "running" || s.state == "runnable") && spinning < 0:
			spinning = len(learners)
		case strings.Contains(s.state, "Mutex") && locked < 0:
			locked = len(learners)
		}
		learners = append(learners, s)
	}
	show := -1
	var why string
	switch {
	case spinning >= 0:
		show = spinning
		fn, file, _ := learners[show].learnerFrame(pkg)
		why = fmt.Sprintf("a goroutine of your code has been running %s (%s) for %v without ever waiting", funcName(fn), baseFile(file), budget)
		for _, h := range hints {
			if strings.HasSuffix(funcName(fn), h.Func) {
				why = h.Says + ": " + why
				break
			}
		}
		why += ". In the tests the clock is fake and moves only while every goroutine waits (on a channel, a timer, a ticker), so a loop that never waits, such as a select with a default case or a loop that checks time.Now(), stops time for good and never ends."
	case locked >= 0:
		show = locked
		fn, file, _ := learners[show].learnerFrame(pkg)
		why = fmt.Sprintf("a goroutine of your code has been waiting %v in %s (%s) for a mutex that is never unlocked: a method that holds it calls another that locks it again, a return without Unlock, or a goroutine that keeps it locked while it waits for something else (a ticker, a channel; see your other goroutines below). A goroutine waiting for a mutex also stops the tests' fake clock, so this never ends.", budget, funcName(fn), baseFile(file))
	default:
		why = fmt.Sprintf("nothing moved for %v: some goroutine keeps running without ever waiting, and the tests' fake clock moves only while every goroutine waits.", budget)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "labtest: %s is stuck: %s", test, why)
	if show >= 0 {
		b.WriteString("\nWhere your code is:")
		writeStack(&b, learners[show], pkg)
	}
	var others []stack
	for i, s := range learners {
		if i != show {
			others = append(others, s)
		}
	}
	if len(others) > 0 {
		b.WriteString("\nYour code's other goroutines:")
		for i, s := range others {
			if i == 3 {
				fmt.Fprintf(&b, "\n  (%d more)", len(others)-i)
				break
			}
			writeStack(&b, s, pkg)
		}
	}
	return b.String()
}

// writeStack writes a goroutine's header, its top frame (where it is
// running or waiting) and the frames of the learner's code.
func writeStack(b *strings.Builder, s stack, pkg string) {
	header := s.header
	if i := strings.Index(header, ", synctest bubble"); i >= 0 {
		header = header[:i] + "]:"
	}
	fmt.Fprintf(b, "\n  %s", header)
	for i, f := range s.frames {
		if strings.HasPrefix(f[0], "created by ") {
			continue
		}
		if _, _, ok := (stack{frames: [][2]string{f}}).learnerFrame(pkg); ok || i == 0 {
			fmt.Fprintf(b, "\n    %s\n        %s", f[0], f[1])
		}
	}
}
