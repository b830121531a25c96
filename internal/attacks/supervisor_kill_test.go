package attacks

import (
	"strings"
	"testing"
	"time"
)

// Attack 2, lab code outlives grading: init() kills its parent (the
// process that supervises it) and starts /bin/sh through net/http/cgi,
// which os/exec's refusal never covered, and also a detached copy of the
// test binary (a new session, the one program the sandbox lets it run)
// that would sleep for an hour. A safe system: the allowlist refuses
// os, syscall and net/http/cgi; past it, the sandbox refuses the signal
// (Landlock scopes) and the shell (nothing runs but the test binary),
// and the supervisor, a subreaper, kills the detached copy when grading
// ends: 5 s after Run returns no process of the attack is left.
func TestAttackOutliveGrading(t *testing.T) {
	m := mark(t)
	code := strings.ReplaceAll(outliveInit, "MARK", m)
	src := hostile(t, []string{"net/http/cgi", "net/http/httptest", "os", "syscall"}, code)
	mustRefuse(t, src, "imports net/http/cgi:", "imports os:", "imports syscall:")

	needSandbox(t)
	res := gradePast(t, src, nil)
	out := output(res)
	if !strings.Contains(out, "attack: kill parent") || !strings.Contains(out, "attack: detached copy") {
		t.Fatalf("the attack did not run:\n%s", out)
	}
	t.Logf("the attack said: %s", strings.Join(attackLines(out), " | "))
	for _, l := range attackLines(out) {
		if strings.HasPrefix(l, "attack: kill parent") && strings.HasSuffix(l, "<nil>") {
			t.Errorf("the lab code killed its parent: %s", l)
		}
	}
	for _, l := range attackLines(out) {
		if strings.HasPrefix(l, "attack: cgi") && strings.Contains(l, "status 200") {
			t.Errorf("the shell ran: %s", l)
		}
	}
	time.Sleep(5 * time.Second) // the bar: nothing left 5 s after grading returned
	if pids := processesWith(m); len(pids) > 0 {
		t.Fatalf("processes the lab code started still run 5 s after grading: %v", pids)
	}
}

// outliveInit is the attack's code. The detached copy sleeps in its own
// init (with the harness's init guard pushed back) until it is killed.
const outliveInit = `
func init() {
	if os.Getenv("ATTACK_CHILD") != "" {
		time.Sleep(time.Hour)
	}
	err := syscall.Kill(os.Getppid(), syscall.SIGKILL)
	fmt.Printf("attack: kill parent %d: %v\n", os.Getppid(), err)
	h := &cgi.Handler{Path: "/bin/sh", Args: []string{"-c", "sleep 3600 # MARK"}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Printf("attack: cgi /bin/sh: status %d\n", rec.Code)
	env := append(os.Environ(), "ATTACK_CHILD=1", "LABTEST_INIT_BUDGET=1h")
	p, err := os.StartProcess(os.Args[0], []string{os.Args[0], "-test.run=^$", "MARK"}, &os.ProcAttr{Env: env, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err == nil {
		p.Release()
	}
	fmt.Printf("attack: detached copy: %v\n", err)
}`
