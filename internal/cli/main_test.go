package cli

import (
	"os"
	"testing"
)

// TestMain points the state directory at a fresh temporary folder, so no
// test (a plain quiz saves its answers) writes to the developer's own
// progress; tests that read what was saved set their own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "playground-cli-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("PLAYGROUND_STATE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
