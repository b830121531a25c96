package fswatch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file replaced the way atomic writers do it (a temp file renamed over
// it) gives one signal; files the matcher refuses give none.
func TestRenameIntoPlaceSignalsOnce(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig, err := Dir(ctx, dir, 100*time.Millisecond, func(base string) bool { return base == "progress.json" })
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".progress.json.tmp")
	if err := os.WriteFile(tmp, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sig:
		t.Fatal("a temp file the matcher refuses gave a signal")
	case <-time.After(500 * time.Millisecond):
	}
	if err := os.Rename(tmp, filepath.Join(dir, "progress.json")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sig:
	case <-time.After(10 * time.Second):
		t.Fatal("no signal after the file was renamed into place")
	}
	select {
	case <-sig:
		t.Fatal("one rename gave two signals")
	case <-time.After(500 * time.Millisecond):
	}
	cancel()
	select {
	case _, ok := <-sig:
		if ok {
			t.Fatal("a signal after the context ended")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel was not closed after the context ended")
	}
}

// A folder that does not exist is an error naming it, not a silent watch.
func TestMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	if _, err := Dir(context.Background(), dir, time.Millisecond, func(string) bool { return true }); err == nil {
		t.Fatal("watching a missing folder succeeded")
	}
}
