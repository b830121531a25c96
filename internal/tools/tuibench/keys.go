//go:build linux

package main

import (
	"fmt"
	"reflect"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/tui"
	"github.com/ownership-election/playground/lessons"
)

// driver runs the root model in-process the way the program does, running
// each command and feeding its messages back until nothing is left.
type driver struct{ m tea.Model }

func (d *driver) send(msg tea.Msg) {
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		msg, queue = queue[0], queue[1:]
		switch msg := msg.(type) {
		case nil, tea.QuitMsg:
			continue
		case tea.BatchMsg:
			for _, c := range msg {
				if c != nil {
					queue = append(queue, c())
				}
			}
			continue
		}
		if reflect.TypeOf(msg).Kind() == reflect.Slice { // tea's sequence message
			v := reflect.ValueOf(msg).Convert(reflect.TypeFor[[]tea.Cmd]()).Interface().([]tea.Cmd)
			for _, c := range v {
				if c != nil {
					queue = append(queue, c())
				}
			}
			continue
		}
		var cmd tea.Cmd
		d.m, cmd = d.m.Update(msg)
		if cmd != nil {
			queue = append(queue, cmd())
		}
	}
}

// keyLatency opens the longest lesson of the embedded course at w×h and
// times Update plus View for scrolling keys and for paging between pages
// already rendered. Progress saving is off, so no file I/O is timed.
func keyLatency(w, h, n int) (scroll, page []time.Duration, err error) {
	course, probs := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content"})
	if len(course.Lessons) == 0 {
		return nil, nil, fmt.Errorf("embedded course has no lessons (%d problems)", len(probs))
	}
	longest, li := 0, 0
	for i, l := range course.Lessons {
		if len(l.Pages) > longest {
			longest, li = len(l.Pages), i
		}
	}
	d := &driver{m: tui.New(tui.Options{Course: course, Learner: "bench"})}
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	for range li {
		d.send(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	d.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	// Visit every page once so all are rendered and cached, then return.
	for range longest {
		d.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	}
	for range longest {
		d.send(tea.KeyPressMsg{Code: 'p', Text: "p"})
	}
	if s := ansi.Strip(d.m.View().Content); len(s) == 0 {
		return nil, nil, fmt.Errorf("empty lesson screen")
	}

	press := func(k tea.KeyPressMsg) time.Duration {
		t0 := time.Now()
		var cmd tea.Cmd
		d.m, cmd = d.m.Update(k)
		_ = d.m.View()
		el := time.Since(t0)
		if cmd != nil {
			d.send(cmd()) // settle outside the timing, as the runtime would
		}
		return el
	}
	for i := range n {
		k := tea.KeyPressMsg{Code: 'j', Text: "j"}
		if (i/20)%2 == 1 {
			k = tea.KeyPressMsg{Code: 'k', Text: "k"}
		}
		scroll = append(scroll, press(k))
	}
	for i := range min(n, 50) {
		k := tea.KeyPressMsg{Code: 'n', Text: "n"}
		if (i/(longest-1))%2 == 1 {
			k = tea.KeyPressMsg{Code: 'p', Text: "p"}
		}
		page = append(page, press(k))
	}
	return scroll, page, nil
}
