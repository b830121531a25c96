package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes this test binary the playground itself when a script
// runs `playground`: testscript copies the binary under that name into
// a folder on the scripts' PATH, and a process started under that name
// runs main, exactly as the built program does (the grading supervisor
// included, which grading starts as os.Executable()).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"playground": main})
}

// TestScripts runs the command-line behaviours in testdata/script, one
// behaviour a .txtar file: what each command prints, where, the files
// it writes, and its exit code. `exec` expects exit 0; `exits N PROGRAM
// ARGS...` expects exit status N exactly (a `! exec` would take any
// failure, 1 and 2 alike, and the codes are the commands' contract).
//
// Every script is hermetic: its own HOME under $WORK (so the state
// folder, ~/.local/state/playground, and the grading cache,
// ~/.cache/playground, are the script's), no PLAYGROUND_* variable but
// PLAYGROUND_USER, and learner files only under $WORK. It shares the Go
// build and module caches with the developer, so grading a lab compiles
// what changed only. $REPO is this checkout, to read the reference
// solutions from.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goEnv := goEnvironment(t)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": cmdExits},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			if err := os.Mkdir(home, 0o700); err != nil {
				return err
			}
			e.Setenv("HOME", home)
			e.Setenv("PLAYGROUND_USER", "tester") // the per-learner shuffles and prefixes
			e.Setenv("REPO", repo)
			for k, v := range goEnv {
				e.Setenv(k, v)
			}
			return nil
		},
	})
}

// cmdExits is `exits N PROGRAM ARGS...`: run PROGRAM as exec does (its
// output is then what stdout and stderr check) and fail unless it exits
// with status N.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...] (not negated)")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil || want == 0 {
		ts.Fatalf("exits %s: want a non-zero exit status (use exec for 0)", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	var ee *exec.ExitError
	switch {
	case err == nil:
		ts.Fatalf("%s exited 0, want %d", args[1], want)
	case !errors.As(err, &ee):
		ts.Fatalf("%s: %v", args[1], err)
	case ee.ExitCode() != want:
		ts.Fatalf("%s exited %d, want %d", args[1], ee.ExitCode(), want)
	}
}

// goEnvironment is the developer's go settings that a fresh HOME and a
// bare environment would lose (the build and module caches, the go env
// file, the proxy, cgo and its compiler for -race), for the go command
// that grading starts inside a script.
func goEnvironment(t *testing.T) map[string]string {
	names := []string{"GOENV", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOINSECURE", "GOTOOLCHAIN", "CGO_ENABLED", "CC"}
	out, err := exec.Command("go", append([]string{"env", "-json"}, names...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	all := map[string]string{}
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatalf("go env -json: %v", err)
	}
	vars := map[string]string{}
	for k, v := range all {
		if v != "" {
			vars[k] = v
		}
	}
	return vars
}
