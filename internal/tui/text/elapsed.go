package text

import (
	"fmt"
	"time"
)

// Elapsed is how long something has run, as the screens write it: a
// tenth of a second under ten seconds ("4.2s"), whole seconds from there
// ("17s").
func Elapsed(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
}
