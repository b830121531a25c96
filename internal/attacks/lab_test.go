package attacks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// lab01Steps are lab 01's step tests, which a forged report claims.
var lab01Steps = []string{"TestStep1_CreateWhenAbsent", "TestStep2_SwapOnlyWhenEqual", "TestStep3_VersionIncreasesOnEveryWrite", "TestStep4_ExpiryMakesKeyAbsent", "TestStep5_ConcurrentCreatesHaveOneWinner"}

// hostile is lab 01's reference solution with imports added to it and
// code appended: a passing lab file that also attacks.
func hostile(t *testing.T, imports []string, code string) []byte {
	t.Helper()
	sol, err := os.ReadFile("../../solutions/01_cas/cas.go")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if !strings.Contains(string(sol), "\t\"fmt\"\n") {
		imports = append([]string{"fmt"}, imports...)
	}
	for _, imp := range imports {
		fmt.Fprintf(&b, "\n\t%q", imp)
	}
	src := strings.Replace(string(sol), "import (", "import ("+b.String(), 1)
	if src == string(sol) {
		t.Fatal("the solution has no import block to add to")
	}
	return []byte(src + "\n" + code + "\n")
}

// mustRefuse checks that the allowlist refuses src as lab 01's file
// before anything is built, with a line naming each of want.
func mustRefuse(t *testing.T, src []byte, want ...string) {
	t.Helper()
	_, cleanup, err := grade.Builtin().Prepare(grade.Submission{Lab: "01_cas", Files: map[string][]byte{"cas.go": src}}, grade.Options{})
	var refused *grade.RefusedError
	if !errors.As(err, &refused) {
		if cleanup != nil {
			cleanup()
		}
		t.Fatalf("the hostile file was accepted for grading (err %v)", err)
	}
	for _, w := range want {
		if !strings.Contains(refused.Error(), w) {
			t.Errorf("the refusal does not say %q:\n%v", w, refused)
		}
	}
}

// gradePast grades src as lab 01's file past the allowlist (written over
// the prepared copy, as a learner who got around the check would), with
// adjust applied to the options.
func gradePast(t *testing.T, src []byte, adjust func(*grade.Options)) *grade.Result {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test")
	}
	sol, _ := os.ReadFile("../../solutions/01_cas/cas.go")
	o, cleanup, err := grade.Builtin().Prepare(grade.Submission{Lab: "01_cas", Files: map[string][]byte{"cas.go": sol}}, grade.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	if err := os.WriteFile(o.Overlay[filepath.Join("labs", "01_cas", "cas.go")], src, 0o644); err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(&o)
	}
	res, err := grade.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.BuildFailed {
		t.Fatalf("the attack does not compile: %s", strings.Join(res.BuildOutput, "\n"))
	}
	return res
}

// needSandbox skips what only the sandbox can stop on a machine that has
// none, saying why; the allowlist's half of the attack still ran.
func needSandbox(t *testing.T) {
	t.Helper()
	if note := grade.SandboxNote(); note != "" {
		t.Skip("no full sandbox here: " + note)
	}
}

// output is everything the run printed, tests and package alike.
func output(res *grade.Result) string {
	lines := append(append([]string{}, res.Output...), res.Stderr...)
	for _, tt := range res.Tests {
		lines = append(lines, tt.Output...)
		lines = append(lines, tt.Failure...)
	}
	return strings.Join(lines, "\n")
}

// attackLines are the lines of out an attack printed (prefix "attack:").
func attackLines(out string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "attack:"); i >= 0 {
			got = append(got, l[i:])
		}
	}
	return got
}

// mark is a fresh token to find an attack's processes and files by.
func mark(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	return "attack" + hex.EncodeToString(b)
}

// processesWith lists the pids whose command line holds s.
func processesWith(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
				continue // ended, not yet reaped
			}
			pids = append(pids, pid)
		}
	}
	return pids
}
