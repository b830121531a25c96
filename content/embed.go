// Package content embeds the course text (lessons and their quizzes) into
// the binary. content/README.md is the instructors' guide to the format.
package content

import (
	"embed"
	"io/fs"
)

//go:embed lessons
var course embed.FS

// FS returns the embedded course; its root holds lessons/NN-slug/... . A
// course passed with --content DIR is os.DirFS(DIR) with the same layout.
func FS() fs.FS { return course }
