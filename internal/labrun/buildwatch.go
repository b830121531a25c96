package labrun

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// buildTick is how often a build that names no new package still
// reports its elapsed time, so a screen's clock does not stand still
// through a long compile or the link; buildStall is BuildStall (both
// shortened by the watch's own test).
var (
	buildTick  = 2 * time.Second
	buildStall = BuildStall
)

// buildWatch reads what `go build -v` writes: a line per package it
// compiles (an import path alone), and the compiler's messages. It counts
// the packages, tells the build's watcher of each, and stops the build
// (cancel) when none came for BuildStall.
type buildWatch struct {
	report func(BuildProgress)
	cancel context.CancelFunc
	start  time.Time

	mu       sync.Mutex
	partial  []byte   // the line being written
	messages []string // what is not a package line: the compiler's
	packages int
	current  string
	last     time.Time // when the go command last named a package
	stall    bool
	done     chan struct{}
	once     sync.Once
	ticking  sync.WaitGroup // tick, which stop waits for: no report after the build
}

func newBuildWatch(report func(BuildProgress), cancel context.CancelFunc) *buildWatch {
	now := time.Now()
	return &buildWatch{report: report, cancel: cancel, start: now, last: now, done: make(chan struct{})}
}

// Write takes the go command's output, a line at a time.
func (w *buildWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.partial = append(w.partial, p...)
	var named bool
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if isPackageLine(line) {
			w.packages++
			w.current, w.last, named = line, time.Now(), true
		} else if len(w.messages) < 400 {
			w.messages = append(w.messages, line)
		}
	}
	p2 := w.snapshot()
	w.mu.Unlock()
	if named && w.report != nil {
		w.report(p2)
	}
	return len(p), nil
}

// isPackageLine reports whether a line of go build -v is an import path
// alone ("go.etcd.io/etcd/client/v3"), not a message ("# pkg", "x.go:3:
// ...", "go: downloading ...").
func isPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " \t:#")
}

func (w *buildWatch) snapshot() BuildProgress {
	return BuildProgress{Elapsed: time.Since(w.start), Packages: w.packages, Current: w.current}
}

// tick reports the elapsed time every buildTick, and stops a build that
// named no package for BuildStall, until the build ends.
func (w *buildWatch) tick(ctx context.Context) {
	defer w.ticking.Done()
	t := time.NewTicker(buildTick)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		stalled := time.Since(w.last) > buildStall
		w.stall = w.stall || stalled
		p := w.snapshot()
		w.mu.Unlock()
		if stalled {
			w.cancel()
			return
		}
		if w.report != nil {
			w.report(p)
		}
	}
}

// stop ends the ticks and waits for the last one: nothing is reported
// once the build has returned.
func (w *buildWatch) stop() {
	w.once.Do(func() { close(w.done) })
	w.ticking.Wait()
}

func (w *buildWatch) stalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stall
}

func (w *buildWatch) progress() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshot().String()
}

// output is what the go command said, without its package lines: the
// compiler's messages of a build that failed.
func (w *buildWatch) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := strings.Join(w.messages, "\n")
	if len(w.partial) > 0 {
		out += "\n" + string(w.partial)
	}
	return out
}

// buildLine is a build's progress as a lab run's --json writes it: a
// line whose kind is "build", before any event of the run.
type buildLine struct {
	Kind     string  `json:"kind"`
	Lab      string  `json:"lab"`
	Seconds  float64 `json:"seconds"`
	Packages int     `json:"packages"`
	Package  string  `json:"package,omitempty"`
}

// BuildLineKind is the kind of a --json line of a build's progress.
const BuildLineKind = "build"

// JSONLine is p as a line of a lab run's --json, of lab.
func (p BuildProgress) JSONLine(lab string) []byte {
	b, _ := json.Marshal(buildLine{Kind: BuildLineKind, Lab: lab, Seconds: p.Elapsed.Seconds(), Packages: p.Packages, Package: p.Current})
	return b
}

// ParseBuildLine reads a line JSONLine wrote; false for any other line.
func ParseBuildLine(line []byte) (BuildProgress, bool) {
	var l buildLine
	if json.Unmarshal(line, &l) != nil || l.Kind != BuildLineKind {
		return BuildProgress{}, false
	}
	return BuildProgress{Elapsed: time.Duration(l.Seconds * float64(time.Second)), Packages: l.Packages, Current: l.Package}, true
}
