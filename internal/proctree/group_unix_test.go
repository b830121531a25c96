//go:build unix

package proctree

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/testwait"
)

// alive reports whether pid runs (a zombie does not count: it has ended,
// only nobody reaped it yet).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(data))
	return len(f) > 2 && f[2] != "Z"
}

// shellWithChild starts sh, which starts a sleep in the background and
// waits for it, and returns the sleep's pid. prepare sets the command up
// before it starts.
func shellWithChild(t *testing.T, ctx context.Context, prepare func(*exec.Cmd)) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 300 & echo $!; wait")
	prepare(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the shell said %q", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return cmd, pid
}

// TestCancelKillsTheWholeGroup: with Group and KillGroupOnCancel, the end
// of the context ends what the command started too; with exec's default
// (only the command killed) the grandchild outlives it, which is what
// the package is for.
func TestCancelKillsTheWholeGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, child := shellWithChild(t, ctx, func(cmd *exec.Cmd) {
		Group(cmd)
		KillGroupOnCancel(cmd)
	})
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		t.Fatal("Group did not ask for a process group")
	}
	cancel()
	cmd.Wait()
	testwait.Until(t, 5*time.Second, "the grandchild to end with its group", func() bool { return !alive(child) })

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	cmd, child = shellWithChild(t, ctx, func(*exec.Cmd) {})
	cancel()
	cmd.Wait()
	if !alive(child) {
		t.Fatal("without a group of its own the grandchild ended too: the test above proves nothing")
	}
}

// TestSignalGroupReachesEveryMember: SIGTERM to the group ends the shell
// and the child it waits for; KillGroup on a command that never started
// does nothing.
func TestSignalGroupReachesEveryMember(t *testing.T) {
	cmd, child := shellWithChild(t, context.Background(), Group)
	if err := SignalGroup(cmd, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the shell ended with %v, want SIGTERM", err)
	}
	testwait.Until(t, 5*time.Second, "the child to end with its group", func() bool { return !alive(child) })
	if err := KillGroup(exec.Command("true")); err != nil {
		t.Fatalf("KillGroup of a command never started: %v", err)
	}
}
