// Package startup is what the program does from the moment it starts,
// before main runs: it holds garbage collection back for a moment, and it
// starts reading the course compiled into the binary (content/ and the lab
// manifests of labs/) on another core.
//
// Both serve the TUI's first frame (issue 7: exec to home screen under
// 100 ms). Reading the course takes about 10 ms; here it overlaps the
// second half of package initialisation instead of following it. A new
// process starts with a 4 MB heap goal, so initialisation and reading the
// course ran several collections on the way to the first frame; read in
// the background with collection on, the course made initialisation
// slower, not faster (tuibench: +14 ms on `playground version`). With
// collection paused the two together save about 9 ms.
//
// The pause ends Pause after the package initialises, and a 256 MB memory
// limit bounds the heap meanwhile. Commands that never ask for the course
// pay for the background read with idle time of the second core only.
package startup

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/labs"
	"github.com/ownership-election/playground/lessons"
)

// Pause is how long garbage collection waits after start: past the first
// frame (about 100 ms after exec) and the start of etcd.
const Pause = 400 * time.Millisecond

// pauseLimit bounds the heap while collection is paused.
const pauseLimit = 256 << 20

// Sources are the files of the built-in course.
func Sources() lessons.Sources {
	return lessons.Sources{
		Course:     content.FS(),
		CourseRoot: "content",
		Labs:       labs.Catalog(),
		LabsRoot:   "labs",
		OwnLabs:    true,
	}
}

var (
	pending *lessons.Pending
	used    atomic.Bool
)

func init() {
	prevPercent := debug.SetGCPercent(-1)
	prevLimit := debug.SetMemoryLimit(pauseLimit)
	time.AfterFunc(Pause, func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
	pending = lessons.Start(Sources())
}

// Course returns the built-in course and its problems, references to
// experiments checked against the given names. The first call gets the
// copy read since start-up; later calls read the course again, so each
// caller owns what it gets.
func Course(experiments []string) (*lessons.Course, []lessons.Problem) {
	if used.CompareAndSwap(false, true) {
		return pending.Wait(experiments)
	}
	src := Sources()
	src.Experiments = experiments
	return lessons.Load(src)
}
