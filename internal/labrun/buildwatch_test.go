package labrun

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// The watch counts go build -v's package lines, tells of each, and
// keeps the compiler's messages (without the package lines) for a build
// that failed.
func TestBuildWatchCountsPackages(t *testing.T) {
	var mu sync.Mutex
	var seen []BuildProgress
	w := newBuildWatch(func(p BuildProgress) { mu.Lock(); seen = append(seen, p); mu.Unlock() }, func() {})
	w.Write([]byte("google.golang.org/grpc\ngo.etcd.io/etcd/cli"))
	w.Write([]byte("ent/v3\n# github.com/ownership-election/playground/labs/05_etcd_lock\nlabs/05_etcd_lock/lock.go:12:2: undefined: x\n"))
	w.stop()
	if len(seen) != 2 || seen[1].Packages != 2 || seen[1].Current != "go.etcd.io/etcd/client/v3" {
		t.Fatalf("reports %+v", seen)
	}
	out := w.output()
	if strings.Contains(out, "grpc") || !strings.Contains(out, "lock.go:12:2: undefined: x") || !strings.HasPrefix(out, "# github.com") {
		t.Fatalf("the compiler's messages:\n%s", out)
	}
	if got := (BuildProgress{Elapsed: 72 * time.Second, Packages: 143, Current: "x/y"}).String(); got != "1m12s, 143 packages compiled, last x/y" {
		t.Fatalf("progress in words: %q", got)
	}
	if got := (BuildProgress{Elapsed: time.Second, Packages: 1}).String(); got != "1s, 1 package compiled" {
		t.Fatalf("one package in words: %q", got)
	}
	p, ok := ParseBuildLine(seen[1].JSONLine("05_etcd_lock"))
	if !ok || p.Packages != 2 || p.Current != "go.etcd.io/etcd/client/v3" {
		t.Fatalf("the JSON line read back: %+v, %v", p, ok)
	}
	if _, ok := ParseBuildLine([]byte(`{"kind":"acquired","replica":"r1"}`)); ok {
		t.Fatal("an event read as a build line")
	}
}

// A build that names no new package for the stall limit is stopped and
// counts as stalled (ErrBuildTimeout), while one that keeps naming
// packages is not.
func TestBuildWatchStopsAStall(t *testing.T) {
	defer func(tick, stall time.Duration) { buildTick, buildStall = tick, stall }(buildTick, buildStall)
	buildTick, buildStall = 5*time.Millisecond, time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newBuildWatch(nil, cancel)
	w.ticking.Add(1)
	go w.tick(ctx)
	for range 30 { // a package every 10 ms, far within the limit: no stall
		w.Write([]byte("a/b\n"))
		time.Sleep(10 * time.Millisecond)
	}
	if w.stalled() || ctx.Err() != nil {
		t.Fatal("stopped a build that kept compiling")
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a build that compiled nothing more was never stopped")
	}
	w.stop()
	if !w.stalled() {
		t.Fatal("stopped, but not counted as stalled")
	}
}
