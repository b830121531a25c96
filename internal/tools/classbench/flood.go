package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
	"github.com/ownership-election/playground/internal/tui/classboard"
)

// floodBytes is about the largest value etcd takes in one request (its
// default limit is 1.5 MiB): what a learner trying to swamp the board
// writes under their own summary key.
const floodBytes = 1400 << 10

type floodResult struct {
	renders []time.Duration
	peakMB  int
}

// floodFigure runs the live board in a child process (so its memory is
// measured apart from the in-process etcd) while one learner writes
// floodBytes to their summary key ten times a second for ten seconds;
// the child draws the board every 100 ms and reports its draw times and
// its peak resident memory.
func floodFigure(ctx context.Context, c *classtest.Cluster, root *clientv3.Client, flooder string) floodResult {
	junk := strings.Repeat("x", floodBytes)
	// The board's first read already meets one.
	_, err := root.Put(ctx, class.Prefix(flooder)+class.SummaryKey, junk)
	check(err)
	settings := filepath.Join(c.Dir, "root.json")
	check(c.Root.WriteFile(settings))
	cmd := exec.CommandContext(ctx, os.Args[0], "-board-child", settings)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	lines := bufio.NewScanner(out)
	lines.Scan() // "ready": the board is read and watching
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		_, err := root.Put(ctx, class.Prefix(flooder)+class.SummaryKey, junk)
		check(err)
		time.Sleep(100 * time.Millisecond)
	}
	var res floodResult
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 2 && f[0] == "render":
			d, err := time.ParseDuration(f[1])
			check(err)
			res.renders = append(res.renders, d)
		case len(f) == 2 && f[0] == "peak-kb":
			kb, err := strconv.Atoi(f[1])
			check(err)
			res.peakMB = kb / 1024
		}
	}
	check(cmd.Wait())
	return res
}

// runBoardChild is the instructor's board alone: read, watch, draw every
// 100 ms for 12 s, then print each draw's time and the peak RSS.
func runBoardChild(settingsFile string) {
	s, err := access.LoadFile(settingsFile)
	check(err)
	root, err := s.New(nil)
	check(err)
	defer root.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	board, err := class.LoadBoard(ctx, root)
	check(err)
	go board.Watch(ctx, root, nil)
	course := benchCourse(0)
	m := classboard.New(classboard.Options{Course: course, Snapshot: board.Snapshot, State: board.State, Where: "bench"})
	fmt.Println("ready")
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Printf("peak-kb %d\n", peakRSS())
			return
		case <-t.C:
			t0 := time.Now()
			m = classboard.New(classboard.Options{Course: course, Snapshot: board.Snapshot, State: board.State, Where: "bench"})
			_ = m.Render()
			fmt.Printf("render %s\n", time.Since(t0))
		}
	}
}

// peakRSS is the process's peak resident set in KiB (Linux's VmHWM).
func peakRSS() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
