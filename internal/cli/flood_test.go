package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui"
)

// A megabyte pasted without bracketed paste arrives as a million key
// presses at once; only a handful may reach the model, and Ctrl-C must
// still get through. Keys typed at human speed all pass.
func TestPasteFloodReachesModelBounded(t *testing.T) {
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	f := &keyFlood{now: func() time.Time { return clock }}
	course, _, err := loadCourse(&Env{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var model tea.Model = tui.New(tui.Options{Course: course, ProgressPath: ""})
	text := []rune("leases expire; tokens fence. ")
	passed := 0
	for i := range 1 << 20 {
		r := text[i%len(text)]
		var msg tea.Msg = tea.KeyPressMsg{Code: r, Text: string(r)}
		if r == ' ' {
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		}
		if msg = f.filter(model, msg); msg != nil {
			passed++
			model, _ = model.Update(msg)
		}
	}
	if passed > floodKeys {
		t.Fatalf("%d of a million pasted keys reached the model, want at most %d", passed, floodKeys)
	}
	if f.filter(model, tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}) == nil {
		t.Fatal("ctrl+c was dropped during a flood")
	}
	// Typing: ten keys a second for a minute, every one passes.
	for i := range 600 {
		clock = clock.Add(100 * time.Millisecond)
		if f.filter(model, tea.KeyPressMsg{Code: 'j', Text: "j"}) == nil {
			t.Fatalf("typed key %d dropped", i)
		}
	}
	// Other messages are never touched.
	if f.filter(model, tea.WindowSizeMsg{Width: 80, Height: 24}) == nil {
		t.Fatal("a resize was dropped")
	}
}

// A panic on the TUI's goroutine still leaves the alternate screen and
// shows the cursor, and the panic goes on (the program must not carry on
// as if nothing happened).
func TestTerminalRestoredOnPanic(t *testing.T) {
	var out bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the original panic", r)
			}
		}()
		defer restoreTerminalOnPanic(env)()
		panic("boom")
	}()
	if !strings.Contains(out.String(), "\x1b[?1049l\x1b[?25h") {
		t.Fatalf("no terminal reset written: %q", out.String())
	}
	out.Reset()
	func() { defer restoreTerminalOnPanic(env)() }()
	if out.Len() != 0 {
		t.Fatalf("reset written without a panic: %q", out.String())
	}
}
