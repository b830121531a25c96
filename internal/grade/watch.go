package grade

import (
	"context"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/fswatch"
)

// Watch watches dir (not its subfolders) for saves of .go files and sends
// one signal per burst of changes, once no change has come for debounce.
// Editors save a file in several steps (write, rename, chmod); a burst is
// one signal. The channel is closed when ctx is done.
func Watch(ctx context.Context, dir string, debounce time.Duration) (<-chan struct{}, error) {
	return fswatch.Dir(ctx, dir, debounce, func(base string) bool {
		return strings.HasSuffix(base, ".go") && !strings.HasPrefix(base, ".")
	})
}
