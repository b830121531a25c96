// Package content embeds the course text (lessons and their quizzes) into
// the binary and names the sources of the built-in course. content/README.md
// is the instructors' guide to the format.
package content

import (
	"embed"
	"io/fs"

	"github.com/ownership-election/playground/labs"
	"github.com/ownership-election/playground/lessons"
)

//go:embed lessons
var course embed.FS

// FS returns the embedded course; its root holds lessons/NN-slug/... . A
// course passed with --content DIR is os.DirFS(DIR) with the same layout.
func FS() fs.FS { return course }

// Sources are the files of the built-in course: the embedded lessons and
// the lab catalogue of labs/, which belongs to it. Experiment names are
// left for the caller to fill in (lessons.Sources.Experiments).
func Sources() lessons.Sources {
	return lessons.Sources{
		Course:     FS(),
		CourseRoot: "content",
		Labs:       labs.Catalog(),
		LabsRoot:   "labs",
		OwnLabs:    true,
		QuizFloor:  QuizFloor,
	}
}

// QuizFloor is the built-in course's bar for its end-of-lesson quizzes:
// each lesson asks at least this many questions beyond its checkpoints.
const QuizFloor = 5
