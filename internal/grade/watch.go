package grade

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch watches dir (not its subfolders) for saves of .go files and sends
// one signal per burst of changes, once no change has come for debounce.
// Editors save a file in several steps (write, rename, chmod); a burst is
// one signal. The channel is closed when ctx is done.
func Watch(ctx context.Context, dir string, debounce time.Duration) (<-chan struct{}, error) {
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
				if !strings.HasSuffix(ev.Name, ".go") || strings.HasPrefix(filepath.Base(ev.Name), ".") {
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
