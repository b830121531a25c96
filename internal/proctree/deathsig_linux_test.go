package proctree

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/testwait"
)

// TestDieWithParent runs a parent (this test binary again) that starts a
// child with DieWithParent, then kills the parent with SIGKILL: the
// kernel sends the child the signal the parent chose, SIGKILL or SIGTERM
// (the child's trap writes which).
func TestDieWithParent(t *testing.T) {
	if sig := os.Getenv("PROCTREE_PARENT"); sig != "" {
		parentMain(sig)
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			got := filepath.Join(t.TempDir(), "got")
			parent := exec.Command(os.Args[0], "-test.run=^TestDieWithParent$")
			parent.Env = append(os.Environ(), "PROCTREE_PARENT="+strconv.Itoa(int(sig)), "PROCTREE_GOT="+got)
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			defer parent.Process.Kill()
			// The shell says its pid and its sleep's once its trap is set.
			line, _ := bufio.NewReader(out).ReadString('\n')
			var pids []int
			for _, f := range strings.Fields(line) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("the shell said %q", line)
				}
				pids = append(pids, pid)
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			}
			if len(pids) != 2 {
				t.Fatalf("the shell said %q", line)
			}
			child := pids[0]
			parent.Process.Kill()
			parent.Wait()
			testwait.Until(t, 5*time.Second, "the child to end with its parent", func() bool { return !alive(child) })
			trapped, _ := os.ReadFile(got)
			if want := map[syscall.Signal]string{syscall.SIGTERM: "TERM\n"}[sig]; string(trapped) != want {
				t.Fatalf("the child's trap wrote %q, want %q", trapped, want)
			}
		})
	}
}

// parentMain starts a shell that traps SIGTERM (writing TERM to
// $PROCTREE_GOT), asks for sig when this process dies, and waits to be
// killed. The shell, on this process's standard output, says its pid and
// its sleep's once the trap is set.
func parentMain(sig string) {
	n, _ := strconv.Atoi(sig)
	cmd := exec.Command("sh", "-c", `trap 'echo TERM > "$PROCTREE_GOT"; kill $!; exit 0' TERM; sleep 300 & echo $$ $!; wait`)
	cmd.Stdout = os.Stdout
	DieWithParent(cmd, syscall.Signal(n))
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
	time.Sleep(time.Hour)
}
