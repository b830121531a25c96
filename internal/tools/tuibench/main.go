//go:build linux

// Command tuibench measures the two figures the TUI promises: the time from
// exec of the built binary to the first home frame on a terminal, and the
// time from a key press to the redrawn lesson screen at 200x60.
//
//	go build -o /tmp/playground ./cmd/playground
//	go run ./internal/tools/tuibench -bin /tmp/playground
//
// Without -bin it builds the binary itself.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	bin := flag.String("bin", "", "the built playground binary (built from ./cmd/playground when empty)")
	runs := flag.Int("runs", 10, "exec-to-first-frame runs")
	keys := flag.Int("keys", 200, "key presses timed on the lesson screen")
	strict := flag.Bool("strict", false, "exit 1 when a figure misses its target")
	flag.Parse()
	err := run(*bin, *runs, *keys)
	if errors.Is(err, errMissed) && !*strict {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tuibench:", err)
		os.Exit(1)
	}
}

func run(bin string, runs, keys int) error {
	if bin == "" {
		dir, err := os.MkdirTemp("", "tuibench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "playground")
		build := exec.Command("go", "build", "-o", bin, "./cmd/playground")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build the binary (run from the module root): %w", err)
		}
	}

	// Baseline: the same binary running a command that draws nothing
	// (`version`), i.e. the Go runtime and package initialisation alone.
	var base []time.Duration
	for range runs {
		t0 := time.Now()
		if err := exec.Command(bin, "version").Run(); err != nil {
			return fmt.Errorf("baseline %s version: %w", bin, err)
		}
		base = append(base, time.Since(t0))
	}
	fmt.Printf("baseline, exec of `playground version` to exit (%d runs): median %v\n", runs, round(median(base)))

	var starts []time.Duration
	for i := range runs {
		d, err := firstFrame(bin, 80, 24)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		starts = append(starts, d)
	}
	med := median(starts)
	fmt.Printf("exec to first home frame (80x24, %d runs): median %v, min %v, max %v  [target < 100ms] %s\n",
		runs, round(med), round(slices.Min(starts)), round(slices.Max(starts)), verdict(med < 100*time.Millisecond))
	fmt.Printf("  of which the TUI's own work (median frame minus median baseline): %v\n", round(med-median(base)))

	scroll, page, err := keyLatency(200, 60, keys)
	if err != nil {
		return err
	}
	fmt.Printf("key press to redraw, lesson screen 200x60, scrolling (%d keys): median %v, p99 %v  [target < 16ms] %s\n",
		keys, round(median(scroll)), round(pct(scroll, 99)), verdict(pct(scroll, 99) < 16*time.Millisecond))
	fmt.Printf("key press to redraw, lesson screen 200x60, paging to a cached page (%d keys): median %v, p99 %v\n",
		len(page), round(median(page)), round(pct(page, 99)))
	if err := idleFigures(bin); err != nil {
		return err
	}
	if med >= 100*time.Millisecond || pct(scroll, 99) >= 16*time.Millisecond {
		return errMissed
	}
	return nil
}

var errMissed = errors.New("a figure missed its target")

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i]
}

func round(d time.Duration) time.Duration {
	if d > time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
