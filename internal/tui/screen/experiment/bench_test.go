package experiment

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// BenchmarkViewLongRun draws a run of 5000 events (a minute of renewals
// and writes by ten replicas) at 80x24.
func BenchmarkViewLongRun(b *testing.B) {
	m := running(New(screen.Context{Styles: theme.NewStyles(true, true)}, Options{Name: "fencing"}))
	m.now = func() time.Time { return clock }
	m.SetSize(78, 22)
	for i := range 5000 {
		r := []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10"}[i%10]
		kind := history.LeaseRenewed
		if i%3 == 0 {
			kind = history.WriteAccepted
		}
		m.snap.events = append(m.snap.events, history.Event{At: 4*time.Second + time.Duration(i)*10*time.Millisecond, Kind: kind, Replica: r, Token: int64(i / 500)})
	}
	b.ResetTimer()
	for range b.N {
		_ = m.View()
	}
}
