//go:build !unix

package embedetcd

import "os"

// Without flock there is no safe way to tell a dead process's data dir from
// a live one, so nothing is ever treated as stale; Close still removes its
// own dir.
func lockOwn(*os.File) error { return nil }

func isStale(*os.File) bool { return false }
