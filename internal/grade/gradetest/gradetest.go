// Package gradetest helps tests that grade labs keep their test binaries
// out of the user's cache.
package gradetest

import (
	"fmt"
	"os"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// Main points grade's cache (PLAYGROUND_CACHE_DIR) at a temporary folder,
// runs the tests and removes the folder. Call it from TestMain:
// os.Exit(gradetest.Main(m)). The test binary also contains its
// gradings, as the playground does (grade.Supervise).
func Main(m *testing.M) int {
	grade.Supervise()
	dir, err := os.MkdirTemp("", "grade-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gradetest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv(grade.CacheDirEnv, dir)
	return m.Run()
}
