package tui

import (
	"context"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
)

// A pass recorded by another program while the TUI sits on the course map
// shows up without a key press: the TUI watches the progress file.
func TestCourseMapFollowsAnotherProgramsPass(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.send(screen.PageShown{Lesson: "first-steps", Page: 0}) // the file exists
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := watchProgressCmd(ctx, h.saved)().(progressWatchMsg)
	if started.sig == nil {
		t.Fatal("could not watch the progress file")
	}
	// The TUI's own write, read back, changes nothing.
	if h.m.followFile(h.m.reloadProgressCmd()().(progressReloadedMsg)) {
		t.Fatal("reading back the TUI's own write counted as a change")
	}
	h.mustShow(" 1/3      –   0/1")

	if _, err := progress.Update(h.saved, func(p *progress.Progress) {
		p.RecordLabGrade("first-steps", "01_cas", progress.LabGrade{Status: progress.LabStatusPassed, At: testNow})
	}); err != nil {
		t.Fatal(err)
	}
	changed := make(chan bool, 1)
	go func() { _, ok := <-started.sig; changed <- ok }()
	select {
	case ok := <-changed:
		if !ok {
			t.Fatal("the watch ended instead of reporting the change")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no signal 10 s after another program wrote the progress file")
	}
	h.send(h.m.reloadProgressCmd()())
	h.mustShow(" 1/3      –   1/1")
}

// A reload that arrives while one of the TUI's own changes is still being
// written is not adopted: it would hide that change until the write lands.
func TestReloadWaitsForOwnChanges(t *testing.T) {
	h := newHarness(t, 80, 24)
	// A change handed out and applied in memory, its write not yet run.
	pending := h.m.record(func(p *progress.Progress) { p.MarkPageRead("first-steps", 2, testNow) })
	if h.m.followFile(h.m.reloadProgressCmd()().(progressReloadedMsg)) {
		t.Fatal("adopted a reload while the TUI's own change was on its way")
	}
	if got := h.m.prog.Peek("first-steps"); got == nil || len(got.PagesRead) != 1 {
		t.Fatal("the change in memory was lost to the reload")
	}
	h.send(pending())
	if got := h.m.prog.Peek("first-steps"); got == nil || len(got.PagesRead) != 1 {
		t.Fatal("the change is not in the progress after its write")
	}
}
