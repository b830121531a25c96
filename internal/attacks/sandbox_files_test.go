package attacks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Reading a file outside the build folder: an instructor's key, another
// learner's submission. A safe system: os is refused; past it, Landlock
// lets the test binary read only its build folder, the system libraries
// and its own /proc entry, so the read fails and the secret never shows.
func TestAttackReadOutsideTheBuildFolder(t *testing.T) {
	secret := mark(t)
	file := filepath.Join(t.TempDir(), "instructor.key")
	if err := os.WriteFile(file, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	code := `
func init() {
	data, err := os.ReadFile(` + strconv.Quote(file) + `)
	fmt.Printf("attack: read outside: %q %v\n", data, err)
}`
	src := hostile(t, []string{"os"}, code)
	mustRefuse(t, src, "imports os:")
	needSandbox(t)
	out := output(gradePast(t, src, nil))
	if !strings.Contains(out, "attack: read outside") {
		t.Fatalf("the attack did not run:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("the lab code read a file outside its build folder: %s", strings.Join(attackLines(out), "\n"))
	}
	if !strings.Contains(out, "permission denied") {
		t.Errorf("the read failed, but not for want of permission: %s", strings.Join(attackLines(out), "\n"))
	}
}

// Reading an ancestor's environment (/proc/<pid>/environ), where class
// cluster credentials may be: the parent's and the grader's own (this
// test process, which holds a secret in its environment). A safe
// system: the test binary's own environment is clean, and Landlock's
// scope keeps it from reading any process's outside the sandbox.
func TestAttackReadAnAncestorsEnviron(t *testing.T) {
	secret := mark(t)
	t.Setenv("ETCDCTL_PASSWORD", "root:"+secret) // an instructor's etcdctl root login
	code := `
func init() {
	for _, pid := range []int{os.Getppid(), ` + strconv.Itoa(os.Getpid()) + `} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		fmt.Printf("attack: environ of %d: %q %v\n", pid, data, err)
	}
	fmt.Printf("attack: own environment: %q\n", os.Environ())
}`
	src := hostile(t, []string{"os"}, code)
	mustRefuse(t, src, "imports os:")
	needSandbox(t)
	out := output(gradePast(t, src, nil))
	if strings.Count(out, "attack: environ of") != 2 {
		t.Fatalf("the attack did not run:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("the lab code read the grader's environment: %s", strings.Join(attackLines(out), "\n"))
	}
}

// Writing into the instructor's Go build cache, which the instructor's
// later builds trust. A safe system: Landlock lets the test binary write
// only its own temporary folder; the file is never made.
func TestAttackWriteTheInstructorsBuildCache(t *testing.T) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	target := filepath.Join(cache, mark(t))
	t.Cleanup(func() { os.Remove(target) })
	code := `
func init() {
	err := os.WriteFile(` + strconv.Quote(target) + `, []byte("poisoned"), 0o644)
	fmt.Printf("attack: write the build cache: %v\n", err)
}`
	src := hostile(t, []string{"os"}, code)
	mustRefuse(t, src, "imports os:")
	needSandbox(t)
	text := output(gradePast(t, src, nil))
	if !strings.Contains(text, "attack: write the build cache") {
		t.Fatalf("the attack did not run:\n%s", text)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("the lab code wrote into the build cache at %s", target)
	}
}
