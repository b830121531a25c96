// Command labrunbench measures a lab run as the learner sees it on the lab
// screen, for each lab with a runner: the screen (internal/tui/screen/lab)
// runs in a real Bubble Tea program at 80x24, its output thrown away, and
// every frame it draws (each View) is timed. A run is `x` pressed on the
// lab's screen, then enter on the schedule list, as a learner does; the
// screen starts `playground experiment run --lab` as a child with the
// lab's reference as the learner's file (a copy of the checkout), its
// replica program built beforehand, as after a first run.
//
// It prints two figures per lab and for all labs together:
//
//   - from the x key to the first frame that shows every replica running
//     the lab's code (the run's replicas_running_s event), bar 3 s;
//   - for every event the running view draws as a line, from the moment
//     the child recorded it (the history's start plus the event's time)
//     to the first frame whose View contains its line: median, p99 and
//     max, bar 100 ms. The renderer then writes that frame to the
//     terminal at its next tick (60 a second).
//
// Usage:
//
//	go run ./internal/tools/labrunbench [-runs 3] [-labs 05,06,07,08,09] [-schedule pause-owner]
//
// It exits 1 if a lab misses a bar.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/labrun"
)

const (
	startBar = 3 * time.Second
	eventBar = 100 * time.Millisecond
)

func main() {
	runs := flag.Int("runs", 3, "runs to time per lab")
	ids := flag.String("labs", "05,06,07,08,09", "the labs to time, comma separated")
	schedule := flag.String("schedule", "pause-owner", "the schedule each run plays")
	flag.Parse()
	if !slices.Contains(labrun.ScheduleNames(), *schedule) {
		fmt.Fprintf(os.Stderr, "labrunbench: no schedule %q (%s)\n", *schedule, strings.Join(labrun.ScheduleNames(), ", "))
		os.Exit(2)
	}
	if labrun.EndsByHand(*schedule) {
		fmt.Fprintf(os.Stderr, "labrunbench: %s waits for a learner to end the run: time another schedule\n", *schedule)
		os.Exit(2)
	}
	if err := benchAll(strings.Split(*ids, ","), *runs, *schedule); err != nil {
		fmt.Fprintln(os.Stderr, "labrunbench:", err)
		os.Exit(1)
	}
}

// benchAll times every lab in ids, then all of them together.
func benchAll(ids []string, runs int, schedule string) error {
	wd, _ := os.Getwd()
	src := grade.FindRoot(wd)
	if src == "" {
		return fmt.Errorf("not inside the course's checkout")
	}
	tmp, err := os.MkdirTemp("", "labrunbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	prog, err := buildPlayground(src, tmp)
	if err != nil {
		return err
	}
	var all figures
	var missed []string
	for _, id := range ids {
		l, ok := labrun.Find(id)
		if !ok {
			return fmt.Errorf("lab %s has no runner (%s)", id, strings.Join(labrun.IDs(), ", "))
		}
		f, err := benchLab(src, filepath.Join(tmp, l.ID), prog, l, runs, schedule)
		if err != nil {
			return fmt.Errorf("lab %s: %w", l.ID, err)
		}
		missed = append(missed, f.report("lab "+l.ID)...)
		all.add(f)
	}
	if len(ids) > 1 {
		missed = append(missed, all.report("all labs")...)
	}
	if len(missed) > 0 {
		return fmt.Errorf("missed: %s", strings.Join(missed, "; "))
	}
	return nil
}

// buildPlayground builds the program the screen runs as its child.
func buildPlayground(src, dir string) (string, error) {
	prog := filepath.Join(dir, "playground")
	build := exec.Command("go", "build", "-o", prog, "./cmd/playground")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the playground: %w\n%s", err, out)
	}
	return prog, nil
}

// benchLab makes the lab's copy of the checkout, builds its replica
// program once (the cache every later run finds), then times runs.
func benchLab(src, root, prog string, l labrun.Lab, runs int, schedule string) (figures, error) {
	if err := learnerCheckout(src, root, l); err != nil {
		return figures{}, err
	}
	t0 := time.Now()
	if _, err := labrun.Build(context.Background(), root, l, false); err != nil {
		return figures{}, err
	}
	fmt.Printf("lab %s: replica program built in %.1f s (cached for the runs)\n", l.ID, time.Since(t0).Seconds())
	var f figures
	for i := range runs {
		r, err := screenRun(prog, root, l, schedule)
		if err != nil {
			return f, fmt.Errorf("run %d: %w", i+1, err)
		}
		fmt.Printf("  run %d: x to all replicas running on screen %.2f s; %d events drawn, slowest %s; %s\n",
			i+1, r.start.Seconds(), len(r.events), slowest(r.events), r.verdict)
		f.starts = append(f.starts, r.start)
		f.events = append(f.events, r.events...)
		f.unseen += r.unseen
	}
	return f, nil
}

// figures are the timings of some runs.
type figures struct {
	starts []time.Duration // x to every replica running, per run
	events []time.Duration // event to its frame, every drawn event
	unseen int             // events the running view should have drawn and did not
}

func (f *figures) add(g figures) {
	f.starts = append(f.starts, g.starts...)
	f.events = append(f.events, g.events...)
	f.unseen += g.unseen
}

// report prints the figures beside their bars and returns the bars
// missed.
func (f figures) report(what string) []string {
	var missed []string
	s, e := slices.Sorted(slices.Values(f.starts)), slices.Sorted(slices.Values(f.events))
	if len(s) == 0 || len(e) == 0 {
		return []string{what + ": nothing measured"}
	}
	fmt.Printf("%s: x to every replica running on screen, %d runs: median %.2f s, slowest %.2f s (bar < %s)\n",
		what, len(s), s[len(s)/2].Seconds(), s[len(s)-1].Seconds(), startBar)
	med, p99 := e[len(e)/2], e[len(e)*99/100]
	fmt.Printf("%s: event to the frame that draws it, %d events: median %s, p99 %s, max %s (bar %s)\n",
		what, len(e), ms(med), ms(p99), ms(e[len(e)-1]), eventBar)
	if f.unseen > 0 {
		fmt.Printf("%s: %d events were never drawn\n", what, f.unseen)
		missed = append(missed, fmt.Sprintf("%s: %d events never drawn", what, f.unseen))
	}
	if s[len(s)-1] >= startBar {
		missed = append(missed, fmt.Sprintf("%s: slowest start %.2f s", what, s[len(s)-1].Seconds()))
	}
	if p99 > eventBar {
		missed = append(missed, fmt.Sprintf("%s: event p99 %s", what, ms(p99)))
	}
	return missed
}

func slowest(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return ms(slices.Max(ds))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
