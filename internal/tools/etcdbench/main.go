// Command etcdbench measures the embedded etcd figures the playground
// promises (start-to-ready, Close with live sessions, cluster start, idle
// RSS) and prints their medians. `make bench` runs it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/embedetcd"
)

func main() {
	runs := flag.Int("runs", 7, "runs per figure")
	flag.Parse()
	state, err := os.MkdirTemp("", "etcdbench-")
	check(err)
	defer os.RemoveAll(state)
	os.Setenv("PLAYGROUND_STATE_DIR", state)
	ctx := context.Background()

	var start, closeT, cluster []time.Duration
	for range *runs {
		t0 := time.Now()
		srv, err := embedetcd.Start(ctx)
		check(err)
		start = append(start, time.Since(t0))
		for range 5 {
			cli, err := srv.Client()
			check(err)
			_, err = concurrency.NewSession(cli, concurrency.WithTTL(5))
			check(err)
		}
		t0 = time.Now()
		check(srv.Close())
		closeT = append(closeT, time.Since(t0))
	}
	for range max(*runs/2, 3) {
		t0 := time.Now()
		cl, err := embedetcd.StartCluster(ctx, 3)
		check(err)
		cluster = append(cluster, time.Since(t0))
		check(cl.Close())
	}
	rss := idleRSS(state)
	fmt.Printf("%-46s %10s %10s\n", "figure (default options)", "median", "bar")
	row("single member start-to-ready", median(start), "150ms")
	row("Close() with 5 live sessions", median(closeT), "50ms")
	row("3-member cluster start-to-ready", median(cluster), "1.5s")
	fmt.Printf("%-46s %9.1fMB %10s\n", "idle RSS of `playground etcd`", rss, "80MB")
}

func row(name string, d time.Duration, bar string) {
	fmt.Printf("%-46s %10s %10s\n", name, d.Round(100*time.Microsecond), bar)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// idleRSS builds and runs `playground etcd`, lets it idle for two seconds
// and reads its resident set size from /proc.
func idleRSS(state string) float64 {
	bin := filepath.Join(state, "playground")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/playground").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build playground: %v\n%s", err, out)
		os.Exit(1)
	}
	cmd := exec.Command(bin, "etcd")
	cmd.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+state)
	stdout, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "export ") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	time.Sleep(2 * time.Second)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	check(err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb / 1024
		}
	}
	return -1
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdbench:", err)
		os.Exit(1)
	}
}
