// Command replaylimit measures how the playground meets a history file
// far over its limit (issue 34: a 535 MiB file once took 76 s and 3.5 GB
// to replay): it writes a 600 MiB history of real-looking events, then
// times `playground experiment replay` on the file and on the same bytes
// through a pipe, with each run's peak resident memory.
//
//	go build -o /tmp/playground ./cmd/playground
//	go run ./internal/tools/replaylimit -playground /tmp/playground [-mib 600]
//
// It exits 1 if a replay was not refused.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("playground", "", "the playground program to measure")
	size := flag.Int64("mib", 600, "size of the history file in MiB")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "replaylimit: -playground PATH is required (go build -o PATH ./cmd/playground)")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "replaylimit-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "huge.json")
	if err := writeHistory(path, *size<<20); err != nil {
		fail(err)
	}
	fmt.Printf("history file: %d MiB of note events\n", *size)
	ok := measure("replay FILE", exec.Command(*bin, "experiment", "replay", path), "")
	ok = measure("replay /dev/stdin (a pipe)", exec.Command(*bin, "experiment", "replay", "/dev/stdin"), path) && ok
	if !ok {
		os.Exit(1)
	}
}

// writeHistory writes a history of ttl-unlock-bug whose events (a note
// of 900 characters each) fill size bytes.
func writeHistory(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"format":1,"scenario":"ttl-unlock-bug","events":[`)
	event := `{"t":1.5,"kind":"note","replica":"r1","text":"` + strings.Repeat("x", 900) + `"},`
	for n := int64(0); n < size; n += int64(len(event)) {
		w.WriteString(event)
	}
	w.WriteString(`{"t":2,"kind":"note","text":"end"}]}`)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// measure runs cmd (its stdin from the file stdin, when given) and prints
// its exit, wall time, peak memory and first line of stderr; false when
// the replay was not refused.
func measure(what string, cmd *exec.Cmd, stdin string) bool {
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		// Through a pipe, so the program cannot learn the size.
		pr, pw, err := os.Pipe()
		if err != nil {
			fail(err)
		}
		go func() { bufio.NewReader(f).WriteTo(pw); pw.Close() }()
		cmd.Stdin = pr
		defer pr.Close()
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	rss := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss >> 10 // KiB on Linux
	}
	line, _, _ := strings.Cut(stderr.String(), "\n")
	fmt.Printf("%-28s exit %d in %.2f s, peak RSS %d MiB: %s\n", what, cmd.ProcessState.ExitCode(), took.Seconds(), rss, line)
	return err != nil && strings.Contains(line, "too large")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "replaylimit:", err)
	os.Exit(1)
}
