// Command coldbuild measures a first build: it builds a package of this
// module with an empty build cache of its own (the module cache is kept:
// nothing is downloaded) and prints the wall time, the CPU time the go
// command and its compilers used, the packages compiled and the load
// average before and after, so the README's first-build figures come
// from a measurement. Run it from the repository's root:
//
//	go run ./internal/tools/coldbuild ./internal/labrun/lock05 ./cmd/playground
//
// The CPU time over the number of cores is about what the same build
// takes on a quiet machine with that many cores; the wall time is what
// it took on this one as loaded as the load average says.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	pkgs := os.Args[1:]
	if len(pkgs) == 0 {
		pkgs = []string{"./internal/labrun/lock05"}
	}
	for _, pkg := range pkgs {
		if err := measure(pkg); err != nil {
			fmt.Fprintf(os.Stderr, "coldbuild %s: %v\n", pkg, err)
			os.Exit(1)
		}
	}
}

func measure(pkg string) error {
	cache, err := os.MkdirTemp("", "coldbuild-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)
	out := filepath.Join(cache, "bin")
	cmd := exec.Command("go", "build", "-v", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOCACHE="+cache)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	before := loadavg()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	n := 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.ContainsAny(l, " :#") {
			n++
		}
	}
	if err := cmd.Wait(); err != nil {
		return err
	}
	wall := time.Since(start)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	cores := runtime.NumCPU()
	fmt.Printf("%s: cold build %s wall, %s CPU (%d packages); CPU/%d cores = %s; load average %s before, %s after\n",
		pkg, wall.Round(time.Second), cpu.Round(time.Second), n, cores, (cpu / time.Duration(cores)).Round(time.Second), before, loadavg())
	return nil
}

// loadavg is the 1-minute load average, or "?" where /proc has none.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
