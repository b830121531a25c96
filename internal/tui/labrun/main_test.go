package labrun

import (
	"fmt"
	"os"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// The gradings here run on temporary copies of a fixture; their test
// binaries go to a temporary cache, not the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labrun-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(grade.CacheDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
