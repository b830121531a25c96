package attacks

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/grade"
)

// Attack 4, memory past the cap in a child: init() starts a copy of the
// test binary that allocates and touches 1.5 GiB, 32 MiB at a time,
// while the binary itself stays small. A safe system counts every
// process the lab code started against one cap: the run is stopped with
// the memory message (here with a 256 MiB cap, to be quick) and the
// child is gone 5 s after grading returned.
func TestAttackMemoryInAChild(t *testing.T) {
	m := mark(t)
	src := hostile(t, []string{"os"}, strings.ReplaceAll(memoryInit, "MARK", m))
	mustRefuse(t, src, "imports os:")

	const limit = 256 << 20
	// A busy machine may take longer than the harness's 20 s init
	// budget to allocate past the cap: the parent waits in its init.
	res := gradePast(t, src, func(o *grade.Options) {
		o.MemoryLimit, o.Timeout = limit, 2*time.Minute
		o.Env = append(o.Env, "LABTEST_INIT_BUDGET=2m")
	})
	out := output(res)
	if !strings.Contains(out, "attack: child started: <nil>") {
		t.Fatalf("the attack did not start its child:\n%s", out)
	}
	if res.Passed || !strings.Contains(res.Message, "256 MiB of memory") {
		t.Fatalf("passed %v, message %q: want the run stopped at the 256 MiB cap\n%s", res.Passed, res.Message, out)
	}
	time.Sleep(5 * time.Second)
	if pids := processesWith(m); len(pids) > 0 {
		t.Fatalf("the allocating child still runs 5 s after grading: %v", pids)
	}
}

// memoryInit is the attack's code: the parent waits for the child, which
// allocates.
const memoryInit = `
var hoard [][]byte

func init() {
	if os.Getenv("ATTACK_CHILD") != "" {
		for range 48 {
			b := make([]byte, 32<<20)
			for i := range b {
				if i%4096 == 0 {
					b[i] = 1
				}
			}
			hoard = append(hoard, b)
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Hour)
	}
	env := append(os.Environ(), "ATTACK_CHILD=1", "LABTEST_INIT_BUDGET=1h")
	p, err := os.StartProcess(os.Args[0], []string{os.Args[0], "-test.run=^$", "MARK"}, &os.ProcAttr{Env: env})
	fmt.Printf("attack: child started: %v\n", err)
	if err == nil {
		p.Wait()
	}
}`
