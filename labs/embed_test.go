package labs_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/labs"
	"github.com/ownership-election/playground/lessons"
)

func TestCatalogHasEveryLabFile(t *testing.T) {
	cat := labs.Catalog()
	manifests, err := fs.Glob(cat, "*/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 4 {
		t.Fatalf("catalog has %d lab manifests, want at least the 4 core labs", len(manifests))
	}
	for _, m := range manifests {
		id := strings.TrimSuffix(m, "/lab.yaml")
		data, err := fs.ReadFile(cat, m)
		if err != nil {
			t.Fatal(err)
		}
		tests, _ := fs.Glob(cat, id+"/*_test.go")
		if len(tests) == 0 {
			t.Errorf("%s: no _test.go files in the catalog", id)
		}
		lab, probs := lessons.ParseLab(m, id, data, nil)
		for _, p := range probs {
			t.Errorf("%s: %v", m, p)
		}
		if _, err := fs.Stat(cat, id+"/"+lab.File); err != nil {
			t.Errorf("%s: the stub %s is not in the catalog: %v", id, lab.File, err)
		}
		if _, err := fs.Stat(cat, id+"/README.md"); err != nil {
			t.Errorf("%s: README.md is not in the catalog", id)
		}
	}
	for _, helper := range []string{"internal", "kv"} {
		if _, err := fs.Stat(cat, helper); err == nil {
			t.Errorf("labs/%s leaked into the catalog", helper)
		}
	}
}

func TestCatalogValidatesAgainstTests(t *testing.T) {
	// Load the real course with the catalog so the lab manifests are
	// checked as `playground check` checks them: steps against test
	// names, hints, and each lab's lesson id. Problems in lesson files
	// belong to the course's authors and are not this package's concern.
	course, probs := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content", Labs: labs.Catalog(), LabsRoot: "labs"})
	for _, p := range probs {
		if strings.HasPrefix(p.Path, "labs/") {
			t.Errorf("%v", p)
		}
	}
	if len(course.Labs) < 4 {
		t.Fatalf("lessons loaded %d labs from the catalog, want at least 4", len(course.Labs))
	}
	for _, l := range course.Labs {
		if len(l.Steps) == 0 || l.README == "" {
			t.Errorf("lab %s: %d steps, README %d bytes", l.ID, len(l.Steps), len(l.README))
		}
	}
}
