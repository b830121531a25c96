package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/lab"
	"github.com/ownership-election/playground/internal/tui/screen/lab/faults"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// The size the screen is drawn at: the smallest the course supports.
const width, height = 80, 24

// runResult is one run's timings.
type runResult struct {
	start   time.Duration   // x to the frame with every replica running
	events  []time.Duration // each drawn event, from its time to its frame
	unseen  int
	verdict string
}

// screenRun drives the lab screen in a Bubble Tea program through one
// run: x, enter on the schedule, then the run to its verdict.
func screenRun(prog, root string, l labrun.Lab, schedule string) (runResult, error) {
	m := lab.New(screen.Context{Styles: theme.DefaultStyles(true)},
		lab.Options{Lab: lessons.Lab{ID: l.ID, Title: l.ID, File: l.File}, Root: root, Program: prog})
	pr := newProbe()
	p := tea.NewProgram(frameTimer{lab: m, probe: pr}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler(), tea.WithWindowSize(width, height))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	defer func() { p.Quit(); <-done; m.Close() }()
	p.Send(tea.WindowSizeMsg{Width: width, Height: height})
	if err := pr.wait(pr.opened, "the lab screen", 30*time.Second); err != nil {
		return runResult{}, err
	}
	pressed := time.Now()
	p.Send(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if err := pr.wait(pr.listed, "the schedule list", 10*time.Second); err != nil {
		return runResult{}, err
	}
	for range indexOf(labrun.ScheduleNames(), schedule) {
		p.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	p.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	if err := pr.wait(pr.ended, "the verdict", 3*time.Minute); err != nil {
		return runResult{}, err
	}
	h, ok := m.FaultHistory()
	if !ok {
		return runResult{}, fmt.Errorf("the run ended without a history: %s", pr.last())
	}
	r := pr.result(h)
	if pr.running.IsZero() {
		return r, fmt.Errorf("no frame showed every replica running: %s", r.verdict)
	}
	r.start = pr.running.Sub(pressed)
	return r, nil
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return 0
}

// frameTimer stands in for the root model: it sizes the lab screen,
// forwards messages, and hands every frame it draws to the probe.
type frameTimer struct {
	lab   *lab.Model
	probe *probe
}

func (f frameTimer) Init() tea.Cmd { return f.lab.Init() }

func (f frameTimer) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		f.lab.SetSize(ws.Width, ws.Height)
	}
	_, cmd := f.lab.Update(msg)
	return f, cmd
}

func (f frameTimer) View() tea.View {
	v := f.lab.View()
	f.probe.frame(time.Now(), v)
	return tea.NewView(v)
}

// probe keeps what the frames showed and when.
type probe struct {
	opened, listed, ended chan struct{}
	once                  [3]sync.Once
	mu                    sync.Mutex
	running               time.Time              // first frame with every replica running
	seen                  map[string][]drawnLine // event lines drawn, by their time ("5.045s")
	lastFrame             string
}

// drawnLine is an event's line as a frame drew it, and that frame's time.
type drawnLine struct {
	text string
	at   time.Time
}

func newProbe() *probe {
	return &probe{opened: make(chan struct{}), listed: make(chan struct{}), ended: make(chan struct{}), seen: map[string][]drawnLine{}}
}

// eventLine finds an event's line in a frame: "  5.045s  restarted  r1 …".
var eventLine = regexp.MustCompile(`(\d+\.\d{3}s)  \S.*`)

// frame takes one drawn frame.
func (p *probe) frame(at time.Time, view string) {
	plain := ansi.Strip(view)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastFrame = plain
	p.signal(0, p.opened, strings.Contains(plain, "README"))
	p.signal(1, p.listed, strings.Contains(plain, "Run your code under faults"))
	if p.running.IsZero() && strings.Contains(plain, "replicas run the lab's code") {
		p.running = at
	}
	ended := strings.Contains(plain, ": HELD") || strings.Contains(plain, ": VIOLATION") || strings.Contains(plain, ": no verdict")
	p.signal(2, p.ended, ended)
	if ended {
		return // the timeline's items look like the running view's lines
	}
	for _, l := range strings.Split(plain, "\n") {
		m := eventLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text := strings.TrimRight(m[0], " ")
		if !p.drawn(m[1], text) {
			p.seen[m[1]] = append(p.seen[m[1]], drawnLine{text, at})
		}
	}
}

func (p *probe) drawn(at, text string) bool {
	for _, d := range p.seen[at] {
		if d.text == text {
			return true
		}
	}
	return false
}

func (p *probe) signal(i int, ch chan struct{}, now bool) {
	if now {
		p.once[i].Do(func() { close(ch) })
	}
}

func (p *probe) wait(ch chan struct{}, what string, limit time.Duration) error {
	select {
	case <-ch:
		return nil
	case <-time.After(limit):
		return fmt.Errorf("no frame showed %s after %s; the last:\n%s", what, limit, p.last())
	}
}

func (p *probe) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastFrame
}

// result times each event of the history the running view draws as a
// line (the ten-a-second kinds it folds into its count are left out):
// from the moment the child recorded it to the first frame with its line.
func (p *probe) result(h history.History) runResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := runResult{verdict: "no verdict"}
	if h.Verdict != nil {
		r.verdict = "held"
		if !h.Verdict.Showed {
			r.verdict = "violation: " + violationSentence(h.Verdict)
		}
	}
	for _, e := range h.Events {
		switch e.Kind {
		case history.WriteAccepted, history.KeyChanged, history.LeaseRenewed, history.Finished:
			continue
		}
		at, ok := p.firstDrawn(e)
		if !ok {
			r.unseen++
			continue
		}
		r.events = append(r.events, at.Sub(h.Started.Add(e.At)))
	}
	return r
}

// firstDrawn is when a frame first drew e's line (cut at the screen's
// edge with "…").
func (p *probe) firstDrawn(e history.Event) (time.Time, bool) {
	want := strings.TrimSpace(faults.EventLine(e))
	for _, d := range p.seen[fmt.Sprintf("%.3fs", e.At.Seconds())] {
		if strings.HasPrefix(want, strings.TrimSuffix(d.text, "…")) {
			return d.at, true
		}
	}
	return time.Time{}, false
}

// violationSentence is how a verdict that did not hold begins: its first
// violation's sentence ("Violated: Left-behind at 1.80 s: ...").
func violationSentence(v *history.Verdict) string {
	if bad := v.Violations(); len(bad) > 0 {
		return "Violated: " + bad[0].Sentence()
	}
	return v.Sentence()
}
