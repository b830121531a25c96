//go:build unix

// Command stress checks that saved progress survives several programs
// writing it at once and being killed at any moment. It runs two TUIs'
// worth of progress writers (each keeps its own copy in memory and saves
// it after every change, as the TUI does) and a grader (recording lab
// passes through progress.Update, as `playground grade` does) side by
// side, kills one of them with SIGKILL at random moments and starts it
// again, and at the end checks that
//
//   - every event a writer recorded (its save returned) is in the file,
//   - no temporary file is left once the next program has started, and
//   - no writer process is left running.
//
// Usage: go run ./internal/tools/stress [-duration 60s] [-seed N] [-v]
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ownership-election/playground/internal/progress"
)

// Writers and how each records one event, so the check knows where to look.
const (
	roleTUI    = "tui"
	roleGrader = "grader"
)

func main() {
	role := flag.String("role", "", "internal: run as a writer (tui or grader)")
	name := flag.String("name", "", "internal: the writer's name")
	dir := flag.String("dir", "", "state directory (default: a new temporary one, removed afterwards)")
	duration := flag.Duration("duration", 60*time.Second, "how long the writers run")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "seed for the kill schedule")
	verbose := flag.Bool("v", false, "print every kill")
	flag.Parse()
	if *role != "" {
		if err := writer(*role, *name, *dir); err != nil {
			fmt.Fprintf(os.Stderr, "stress %s %s: %v\n", *role, *name, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dir, *duration, *seed, *verbose); err != nil {
		fmt.Fprintf(os.Stderr, "stress: FAIL: %v\n", err)
		os.Exit(1)
	}
}

// writer records events until killed: each event goes into the progress
// file first and into the writer's journal only once the save returned,
// so the journal lists exactly what the writer was told was recorded.
func writer(role, name, dir string) error {
	path := filepath.Join(dir, progress.FileName)
	journal, err := os.OpenFile(filepath.Join(dir, name+".journal"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	// A restarted writer continues the numbering after what it recorded.
	n := countLines(journal.Name())
	mine, _ := progress.Load(path, time.Now()) // what a TUI starts from
	for ; ; n++ {
		id := fmt.Sprintf("%s-%d", name, n)
		now := time.Now()
		switch role {
		case roleTUI:
			// A page turn and an inline answer, as the reader records them.
			mine.MarkPageRead("stress-"+name, n, now)
			mine.RecordCheck("stress-"+name, id, progress.Answer{Response: "1", Score: 1, Correct: true, At: now})
			err = progress.Save(path, mine)
		case roleGrader:
			_, err = progress.Update(path, func(p *progress.Progress) {
				p.RecordLabPassed("stress-grades", id, now)
			})
		default:
			return fmt.Errorf("unknown role %q", role)
		}
		if err != nil {
			return err
		}
		if _, err := journal.WriteString(id + "\n"); err != nil {
			return err
		}
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	}
}

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
	}
	return n
}

type proc struct {
	name, role string
	cmd        *exec.Cmd
	exited     chan error
	starts     int
}

func run(dir string, duration time.Duration, seed uint64, verbose bool) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "playground-stress-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	procs := []*proc{{name: "tui1", role: roleTUI}, {name: "tui2", role: roleTUI}, {name: "grader", role: roleGrader}}
	start := func(p *proc) error {
		p.cmd = exec.Command(self, "-role", p.role, "-name", p.name, "-dir", dir)
		p.cmd.Stderr = os.Stderr
		if err := p.cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", p.name, err)
		}
		p.starts++
		p.exited = make(chan error, 1)
		go func(c *exec.Cmd, ch chan error) { ch <- c.Wait() }(p.cmd, p.exited)
		return nil
	}
	// However the run ends, no writer outlives it.
	defer func() {
		for _, p := range procs {
			if p.cmd != nil && p.cmd.Process != nil {
				p.cmd.Process.Signal(syscall.SIGKILL)
				<-p.exited
				p.cmd = nil
			}
		}
	}()
	for _, p := range procs {
		if err := start(p); err != nil {
			return err
		}
	}
	fmt.Printf("stress: 2 TUI writers and a grader on %s for %v (seed %d)\n", dir, duration, seed)
	kills := 0
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(50+rng.IntN(450)) * time.Millisecond)
		p := procs[rng.IntN(len(procs))]
		select {
		case err := <-p.exited:
			return fmt.Errorf("%s stopped by itself: %v", p.name, err)
		default:
		}
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		kills++
		if verbose {
			fmt.Printf("  %6.2fs kill -9 %s (pid %d)\n", time.Until(deadline).Seconds(), p.name, p.cmd.Process.Pid)
		}
		if err := start(p); err != nil {
			return err
		}
	}
	var pids []int
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		pids = append(pids, p.cmd.Process.Pid)
		p.cmd = nil
	}
	return check(dir, procs, pids, kills)
}

func check(dir string, procs []*proc, pids []int, kills int) error {
	path := filepath.Join(dir, progress.FileName)
	temps, _ := filepath.Glob(filepath.Join(dir, progress.FileName+".tmp-*"))
	leftByKills := len(temps)
	// The next program to start (any writer) clears what the killed ones
	// left half-written.
	if _, err := progress.Update(path, func(*progress.Progress) {}); err != nil {
		return fmt.Errorf("the next start could not save: %w", err)
	}
	p, notice := progress.Load(path, time.Now())
	if notice != nil {
		return fmt.Errorf("progress file unreadable after the run: %v", notice)
	}
	var problems []string
	total := 0
	for _, pr := range procs {
		f, err := os.Open(filepath.Join(dir, pr.name+".journal"))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		lost := 0
		for sc.Scan() {
			id := sc.Text()
			total++
			if !recorded(p, pr, id) {
				lost++
				if lost <= 5 {
					problems = append(problems, fmt.Sprintf("%s: event %s recorded but not in the file", pr.name, id))
				}
			}
		}
		f.Close()
		if lost > 5 {
			problems = append(problems, fmt.Sprintf("%s: %d more lost", pr.name, lost-5))
		}
		fmt.Printf("  %-7s %5d events recorded, %3d starts\n", pr.name, countLines(f.Name()), pr.starts)
	}
	temps, _ = filepath.Glob(filepath.Join(dir, progress.FileName+".tmp-*"))
	if len(temps) > 0 {
		problems = append(problems, fmt.Sprintf("%d temporary file(s) left after the next start: %v", len(temps), temps))
	}
	for _, pid := range pids {
		if alive(pid) {
			problems = append(problems, fmt.Sprintf("writer process %d still running", pid))
		}
	}
	fmt.Printf("stress: %d kill -9s, %d events recorded, %d lost; %d temp file(s) left by kills, %d after the next start; %d writer processes left\n",
		kills, total, lostCount(problems), leftByKills, len(temps), countAlive(pids))
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n  "))
	}
	fmt.Println("stress: PASS")
	return nil
}

// recorded reports whether event id of writer pr is in p.
func recorded(p *progress.Progress, pr *proc, id string) bool {
	if pr.role == roleGrader {
		return p.LabPassed("stress-grades", id)
	}
	l := p.Peek("stress-" + pr.name)
	if l == nil {
		return false
	}
	n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
	_, checked := l.Checks[id]
	page := false
	for _, pg := range l.PagesRead {
		if pg == n {
			page = true
			break
		}
	}
	return checked && page
}

func lostCount(problems []string) int {
	n := 0
	for _, p := range problems {
		if strings.Contains(p, "not in the file") {
			n++
		} else if _, rest, ok := strings.Cut(p, ": "); ok && strings.HasSuffix(rest, "more lost") {
			k, _ := strconv.Atoi(strings.Fields(rest)[0])
			n += k
		}
	}
	return n
}

// alive reports whether a process with pid exists (and is not a zombie
// of ours: every writer was waited for).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

func countAlive(pids []int) int {
	n := 0
	for _, p := range pids {
		if alive(p) {
			n++
		}
	}
	return n
}
