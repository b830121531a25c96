package main

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// TestOnScreen: an event counts as drawn from the first frame that shows
// its time or a later event's; one no frame showed counts from the
// finished screen's first frame; without that, it is an error.
func TestOnScreen(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h := history.History{Started: start, Events: []history.Event{
		{At: ms(100), Kind: history.Acquired},
		{At: ms(150), Kind: history.LeaseRenewed},
		{At: ms(200), Kind: history.Waiting}, // not drawn: not measured
		{At: ms(300), Kind: history.Released},
		{At: ms(310), Kind: history.Finished},
	}}
	frames := []frame{
		{at: start.Add(ms(105)), view: "starting"},
		{at: start.Add(ms(110)), view: "0.100s  a1 became owner"},
		{at: start.Add(ms(170)), view: "0.100–0.150s  1 lease renewal"},
		{at: start.Add(ms(320)), view: finishedHeader + " · ended at 0.310s"},
	}
	lat, atEnd, err := onScreen(h, frames)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{ms(10), ms(20), ms(20)}
	if len(lat) != len(want) || lat[0] != want[0] || lat[1] != want[1] || lat[2] != want[2] || atEnd != 1 {
		t.Errorf("latencies %v (%d at the end), want %v (1 at the end)", lat, atEnd, want)
	}
	if _, _, err := onScreen(h, frames[:3]); err == nil {
		t.Error("an event no frame showed, with no finished screen, was not an error")
	}
}
