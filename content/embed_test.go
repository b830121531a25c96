package content

import (
	"io/fs"
	"testing"
)

func TestFSHoldsLessons(t *testing.T) {
	mds, err := fs.Glob(FS(), "lessons/*/lesson.md")
	if err != nil {
		t.Fatal(err)
	}
	quizzes, err := fs.Glob(FS(), "lessons/*/quiz.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(mds) == 0 || len(mds) != len(quizzes) {
		t.Errorf("embedded course: %d lesson.md and %d quiz.yaml files", len(mds), len(quizzes))
	}
}
