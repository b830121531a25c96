package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen"
	expscreen "github.com/ownership-election/playground/internal/tui/screen/experiment"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// frame is one drawn view of the screen and when it was drawn.
type frame struct {
	at   time.Time
	view string
}

// screenLatencies runs every scenario through the experiment screen
// and returns, over all of them, how long each event took to be on a
// drawn view (see driveScreen and onScreen). The runs save their
// histories under stateDir, where the screen's runs always save them.
func screenLatencies(ctx context.Context, srv embedetcd.Etcd, stateDir string) ([]time.Duration, bool) {
	fmt.Println("every scenario through the experiment screen at 80x24, auto-play with no pause:")
	var all []time.Duration
	ok := true
	for _, sc := range scenario.Scenarios() {
		lat, atEnd, err := screenLatency(ctx, srv, sc.Name, stateDir)
		if err != nil {
			fmt.Printf("  %-30s MISSED: %v\n", sc.Name, err)
			ok = false
			continue
		}
		med, p99 := quantiles(lat)
		end := ""
		if atEnd > 0 {
			end = fmt.Sprintf("  (%d came with the run's end: counted to the finished screen)", atEnd)
		}
		fmt.Printf("  %-30s %4d events  median %s  p99 %s%s\n", sc.Name, len(lat), med.Round(time.Microsecond), p99.Round(time.Microsecond), end)
		all = append(all, lat...)
	}
	return all, ok
}

// screenLatency drives one run of name through the screen and measures
// its events against the frames drawn, by the history the run saved.
func screenLatency(ctx context.Context, srv embedetcd.Etcd, name, stateDir string) ([]time.Duration, int, error) {
	frames, err := driveScreen(ctx, srv, name)
	if err != nil {
		return nil, 0, err
	}
	h, err := savedHistory(filepath.Join(stateDir, "experiments"), name)
	if err != nil {
		return nil, 0, err
	}
	return onScreen(h, frames)
}

// driveScreen is the TUI's loop around the screen, without a terminal:
// commands run in goroutines of their own, each message they return goes
// to Update, and the view is drawn after every Update. The learner picks
// the first prediction, which starts the run; the loop ends when the
// screen has nothing more to do (the run over, its history saved).
func driveScreen(ctx context.Context, srv embedetcd.Etcd, name string) ([]frame, error) {
	m := expscreen.New(screen.Context{Styles: theme.NewStyles(true, true)},
		expscreen.Options{Name: name, Etcd: srv, TempoSet: true, Tempo: 0})
	defer m.Close()
	m.SetSize(78, 22) // an 80x24 terminal less the root's frame
	msgs := make(chan tea.Msg, 16)
	pending := 0
	var start func(tea.Cmd)
	start = func(c tea.Cmd) {
		if c != nil {
			pending++
			go func() { msgs <- c() }()
		}
	}
	_, c := m.Update(tea.KeyPressMsg{Code: '1', Text: "1"})
	start(c)
	var frames []frame
	deadline := time.After(2 * time.Minute)
	for pending > 0 {
		var msg tea.Msg
		select {
		case msg = <-msgs:
		case <-deadline:
			return nil, fmt.Errorf("the screen's run did not end in 2 minutes")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		pending--
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				start(c)
			}
			continue
		}
		_, c := m.Update(msg)
		view := ansi.Strip(m.View())
		frames = append(frames, frame{at: time.Now(), view: view}) // drawn: after View
		start(c)
	}
	return frames, nil
}

// savedHistory reads the newest history of name in dir.
func savedHistory(dir, name string) (history.History, error) {
	paths, err := filepath.Glob(filepath.Join(dir, name+"-*.json"))
	if err != nil || len(paths) == 0 {
		return history.History{}, fmt.Errorf("the screen's run saved no history in %s", dir)
	}
	f, err := os.Open(paths[len(paths)-1]) // names sort by start time
	if err != nil {
		return history.History{}, err
	}
	defer f.Close()
	return scenario.ReadHistory(f)
}

// onScreen is, for each event the timeline draws, how long after it
// happened the first frame showed it, and how many were first drawn by
// the finished screen. A frame shows an event when it shows its time
// (every item of the timeline is labelled with the time of its last
// event, and the cursor's item, the newest while the run is live, is
// drawn in full), or a later event's: the screen takes the run's events
// in order, so a frame with a later one has this one too, in a column or
// a count. The finished screen has every event of the run (it drew
// itself once the run was over) but opens on the verdict's finding, so
// the events that came with the run's end are counted from its first
// frame.
func onScreen(h history.History, frames []frame) ([]time.Duration, int, error) {
	newest := newestByStamp(h.Events)
	finished := slices.IndexFunc(frames, func(f frame) bool { return strings.Contains(f.view, finishedHeader) })
	var lat []time.Duration
	atEnd := 0
	next, shownUpTo := 0, -1 // the frame being looked at; the newest event shown so far
	for i, e := range h.Events {
		if !drawn(e) {
			continue
		}
		for shownUpTo < i && next < len(frames) && (finished < 0 || next < finished) {
			shownUpTo = max(shownUpTo, newestShown(newest, frames[next].view))
			if shownUpTo < i {
				next++
			}
		}
		f := next
		if shownUpTo < i {
			if finished < 0 {
				return lat, atEnd, fmt.Errorf("event %d (%s at %.3fs) was never on a drawn view", i, e.Kind, e.At.Seconds())
			}
			f, atEnd = finished, atEnd+1
		}
		lat = append(lat, max(0, frames[f].at.Sub(h.Started.Add(e.At))))
	}
	return lat, atEnd, nil
}

// finishedHeader is what the screen's header says once the run is over.
const finishedHeader = "finished: enter runs it again"

// drawn: the timeline draws e (it leaves out the script's waiting lines
// and the verdict, which the screen says otherwise).
func drawn(e history.Event) bool {
	return e.Kind != history.Waiting && e.Kind != history.Finished
}

// stamp is an item's time as the timeline writes it.
var stamp = regexp.MustCompile(`\d+\.\d{3}s`)

// newestByStamp is, for each time the timeline may write, the newest
// drawn event at that time.
func newestByStamp(events []history.Event) map[string]int {
	out := map[string]int{}
	for i, e := range events {
		if drawn(e) {
			out[fmt.Sprintf("%.3fs", e.At.Seconds())] = i
		}
	}
	return out
}

// newestShown is the index of the newest event whose time the view
// shows, -1 for none.
func newestShown(newest map[string]int, view string) int {
	n := -1
	for _, s := range stamp.FindAllString(view, -1) {
		if i, ok := newest[s]; ok {
			n = max(n, i)
		}
	}
	return n
}
