// Command gradebench compares how long `playground grade` takes with the
// program built at two revisions (issue 34's bar: grading with the
// sandbox, the judge and the allowlist stays within 10% of grading
// without them). It builds cmd/playground at -base (a git revision,
// checked out into a temporary worktree) and from the working tree, then
// grades each lab's reference solution with both, alternating A, B, B, A
// so that a machine that gets busier or quieter during the run weighs on
// both alike, and prints the medians and their ratio.
//
//	go run ./internal/tools/gradebench -base 979cdfa -labs 04,05,06 -rounds 4
//
// Each grading is `playground grade --json --submission FILE LAB` in an
// empty folder: the tests, the harness and go.mod are the ones built into
// each program, so the two builds grade the same lab file with their own
// copy of the course (pick labs whose tests did not change between the
// revisions, or the figure measures the tests too). The step runs and the
// verification (5 runs under -race) are both timed; a first grading per
// build and lab warms the build caches and is not counted.
//
// Beside the wall time it prints the CPU time of each grading (user and
// system, of the playground and every process it waited for: the go
// command, the supervisor, judge, sandbox step and test binaries). On a
// shared machine at load 20 or more the wall time of one grading swings
// by a factor of three with what else runs; the CPU it took swings far
// less, so a CPU ratio near the wall ratio says the wall ratio is real.
//
// It exits 1 when a lab's median is more than -bar (10%) over the base's.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	base := flag.String("base", "", "git revision to compare against (required)")
	labs := flag.String("labs", "04,05,06", "labs to grade, comma-separated folder numbers")
	rounds := flag.Int("rounds", 4, "timed gradings per build and lab (alternating)")
	bar := flag.Float64("bar", 0.10, "largest slowdown allowed, as a fraction")
	flag.Parse()
	if *base == "" || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "gradebench: -base REV is required and -rounds must be at least 1")
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "gradebench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	oldBin, newBin, err := buildBoth(*base, tmp)
	if err != nil {
		fail(err)
	}
	over := 0
	fmt.Printf("%-5s %-10s %-10s %-7s %-10s %-10s %-7s %s\n", "lab", "base", "now", "ratio", "cpu base", "cpu now", "ratio", "load")
	for _, lab := range strings.Split(*labs, ",") {
		lab = strings.TrimSpace(lab)
		r, err := compare(lab, oldBin, newBin, *rounds, tmp)
		if err != nil {
			fail(err)
		}
		verdict := "ok"
		if r.ratio() > 1+*bar {
			verdict = "OVER"
			over++
		}
		fmt.Printf("%-5s %-10s %-10s %-7.3f %-10s %-10s %-7.3f %s %s\n", lab, secs(r.old), secs(r.now), r.ratio(),
			secs(r.oldCPU), secs(r.nowCPU), float64(r.nowCPU)/float64(r.oldCPU), loadAverage(), verdict)
	}
	fmt.Printf("medians of %d gradings each (steps + verification), wall and CPU, base %s against the working tree; bar: wall at most %.0f%% slower\n", *rounds, *base, *bar*100)
	if over > 0 {
		os.Exit(1)
	}
}

// buildBoth builds the playground at rev (in a worktree under tmp) and
// from the working tree.
func buildBoth(rev, tmp string) (oldBin, newBin string, err error) {
	wt := filepath.Join(tmp, "base")
	if out, err := exec.Command("git", "worktree", "add", "--detach", wt, rev).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("git worktree add %s: %v\n%s", rev, err, out)
	}
	defer exec.Command("git", "worktree", "remove", "--force", wt).Run()
	oldBin, newBin = filepath.Join(tmp, "pg-base"), filepath.Join(tmp, "pg-now")
	for _, b := range []struct{ dir, out string }{{wt, oldBin}, {".", newBin}} {
		cmd := exec.Command("go", "build", "-o", b.out, "./cmd/playground")
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("build in %s: %v\n%s", b.dir, err, out)
		}
	}
	return oldBin, newBin, nil
}

// result is one lab's medians, wall and CPU.
type result struct{ old, now, oldCPU, nowCPU time.Duration }

func (r result) ratio() float64 { return float64(r.now) / float64(r.old) }

// compare grades lab's solution with both programs: one untimed warm-up
// each, then rounds timed gradings each in the order A B B A A B B A...
func compare(lab, oldBin, newBin string, rounds int, tmp string) (result, error) {
	file, err := solutionFile(lab)
	if err != nil {
		return result{}, err
	}
	var olds, nows, oldCPUs, nowCPUs []time.Duration
	for _, bin := range []string{oldBin, newBin} {
		if _, _, err := grade(bin, lab, file, tmp); err != nil {
			return result{}, err
		}
	}
	for i := range 2 * rounds {
		bin := oldBin
		if (i%4 == 1) || (i%4 == 2) {
			bin = newBin
		}
		d, cpu, err := grade(bin, lab, file, tmp)
		if err != nil {
			return result{}, err
		}
		if bin == oldBin {
			olds, oldCPUs = append(olds, d), append(oldCPUs, cpu)
		} else {
			nows, nowCPUs = append(nows, d), append(nowCPUs, cpu)
		}
	}
	return result{median(olds), median(nows), median(oldCPUs), median(nowCPUs)}, nil
}

// solutionFile is the reference solution's one .go file for lab NN.
func solutionFile(lab string) (string, error) {
	dirs, _ := filepath.Glob(filepath.Join("solutions", lab+"_*"))
	if len(dirs) != 1 {
		return "", fmt.Errorf("lab %s: want one solutions/%s_* folder, found %v (run from the module root)", lab, lab, dirs)
	}
	files, _ := filepath.Glob(filepath.Join(dirs[0], "*.go"))
	var src []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			src = append(src, f)
		}
	}
	if len(src) != 1 {
		return "", fmt.Errorf("lab %s: want one solution file in %s, found %v", lab, dirs[0], src)
	}
	return filepath.Abs(src[0])
}

// grade runs one grading in an empty folder (no checkout, so nothing is
// recorded) with its own state folder, and returns its wall time and
// CPU time; a grading that does not pass is an error.
func grade(bin, lab, file, tmp string) (time.Duration, time.Duration, error) {
	dir, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, "grade", "--json", "--submission", file, lab)
	cmd.Dir = dir
	// Each build keeps its compiled tests in a cache folder of its own,
	// kept across its gradings as a learner's is.
	cache := filepath.Join(tmp, "cache-"+filepath.Base(bin))
	cmd.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+dir, "PLAYGROUND_CACHE_DIR="+cache)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s grade %s: %v\n%s", filepath.Base(bin), lab, err, out.String())
	}
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// loadAverage is the 1-minute load average, as a reminder of how busy
// the machine was.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load ?"
	}
	return "load " + strings.Fields(string(b))[0]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gradebench:", err)
	os.Exit(1)
}
