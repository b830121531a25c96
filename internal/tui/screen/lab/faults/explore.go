package faults

import "github.com/ownership-election/playground/internal/labrun"

// exploreEntry is the last line of the schedule list: instead of one
// schedule, `playground experiment explore` (faults at every request the
// lab's code sends, judged against the reference on the same faults),
// its progress as the run's events, its smallest failing run as the
// timeline once it ends.
const exploreEntry = "explore"

// listNames are the schedule list's lines: the prepared schedules, then
// exploration.
func listNames() []string { return append(labrun.ScheduleNames(), exploreEntry) }

// says is what a line of the list does.
func says(name string) string {
	if name == exploreEntry {
		return "faults at every request your code sends: a calm run finds its call sites, then one run per site, fault (fail, lose, hold, pause, cut, leader) and role, about two minutes; a failure is run again with the reference on the same faults and shrunk, and its timeline shown"
	}
	return labrun.ScheduleSays(name)
}
