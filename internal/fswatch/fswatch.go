// Package fswatch turns a folder's file events into one signal per burst
// of changes. Editors and atomic writers save a file in several steps
// (write a temp file, rename it, chmod); a reader wants to hear once, after
// the last step. Used for watch mode's lab folders and for the progress
// file another program may change.
package fswatch

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Dir watches dir (not its subfolders) and sends one signal per burst of
// events on files whose base name match accepts, once no such event has
// come for debounce. The channel holds at most one pending signal and is
// closed when ctx is done or the watcher fails. Nothing runs between
// events: no timer ticks while the folder is quiet.
func Dir(ctx context.Context, dir string, debounce time.Duration, match func(base string) bool) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				if timer != nil {
					timer.Stop()
				}
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !match(filepath.Base(ev.Name)) {
					continue
				}
				if timer == nil {
					timer = time.NewTimer(debounce)
				} else {
					timer.Reset(debounce)
				}
				fire = timer.C
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-fire:
				fire = nil
				select {
				case out <- struct{}{}:
				default: // a signal is already pending; one is enough
				}
			}
		}
	}()
	return out, nil
}
