package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// The gradings here run on fixture labs; their test
// binaries go to a temporary cache, not the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labcheck-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(grade.CacheDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
