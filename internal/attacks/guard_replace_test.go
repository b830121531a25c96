package attacks

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// Replacing the guard program: grading builds its supervisor, judge and
// sandbox step once, as a program in the course's build folder, and
// starts it for every grading after. Lab code that rewrote it would be
// the next grading's judge, holding that run's key (a forged verified
// grade), and its supervisor (nothing reaped). A safe system: os is
// refused; past it, Landlock lets the test binary read only its lab's
// package folder and write only its temporary folder, so the program
// can be neither written nor removed, and it is the same afterwards.
func TestAttackReplaceTheGuardProgram(t *testing.T) {
	dir, err := grade.Builtin().Dir()
	if err != nil {
		t.Fatal(err)
	}
	guard := filepath.Join(dir, "bin", "playground-guard")
	code := `
func init() {
	err := os.WriteFile(` + strconv.Quote(guard) + `, []byte("#!/bin/sh\n"), 0o755)
	fmt.Printf("attack: rewrite the guard: %v\n", err)
	err = os.Remove(` + strconv.Quote(guard) + `)
	fmt.Printf("attack: remove the guard: %v\n", err)
}`
	src := hostile(t, []string{"os"}, code)
	mustRefuse(t, src, "imports os:")
	needSandbox(t)
	sol, _ := os.ReadFile("../../solutions/01_cas/cas.go")
	gradePast(t, sol, nil) // builds the guard, if no test did yet
	before, err := os.ReadFile(guard)
	if err != nil {
		t.Fatalf("no guard program after a grading: %v", err)
	}
	text := output(gradePast(t, src, nil))
	if strings.Count(text, "attack: ") < 2 {
		t.Fatalf("the attack did not run:\n%s", text)
	}
	for _, l := range attackLines(text) {
		if strings.HasSuffix(l, "<nil>") {
			t.Errorf("the lab code changed the guard program: %s", l)
		}
	}
	after, err := os.ReadFile(guard)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the guard program is not the one grading built (%v)", err)
	}
}
