package lessons

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestWordsNormalise(t *testing.T) {
	got := words("Don't *panic*:\n`CreateRevision` = 0, ok?")
	want := []word{{"dont", 1}, {"panic", 1}, {"createrevision", 2}, {"0", 2}, {"ok", 2}}
	if len(got) != len(want) {
		t.Fatalf("words = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("word %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestOriginalityFindsSharedRuns(t *testing.T) {
	seed := "Leader election is how replicas agree on who the owner is, and how ownership moves on."
	prints := PrintSeeds(map[string]string{"seed-a": seed})
	lesson := "---\nid: x\n---\n\n# Page\n\nIn short, LEADER election is how\nreplicas agree on who the owner is!\n\n" +
		"Our own words here are fine, and seven words is fine too: how replicas agree on who the.\n"
	fsys := fstest.MapFS{"lessons/01-x/lesson.md": {Data: []byte(lesson)}}
	c := &Course{Lessons: []*Lesson{{Path: "course/lessons/01-x/lesson.md", Dir: "lessons/01-x"}}}
	probs, err := Originality(fsys, c, prints)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 1 {
		t.Fatalf("Originality found %d runs, want 1: %v", len(probs), probs)
	}
	p := probs[0]
	if p.Path != "course/lessons/01-x/lesson.md" || p.Line != 7 || !strings.Contains(p.Msg, "11 words") || !strings.Contains(p.Msg, "seed-a") {
		t.Errorf("problem = %s, want line 7, an 11-word run, named after seed-a", p)
	}
}

func TestSeedPrintsRoundTrip(t *testing.T) {
	p := PrintSeeds(map[string]string{"s": "one two three four five six seven eight nine"})
	if len(p) != 2 {
		t.Fatalf("9 words make %d runs of 8, want 2", len(p))
	}
	builtInPrintsSaved := builtInPrints
	t.Cleanup(func() { builtInPrints = builtInPrintsSaved })
	builtInPrints = p.Format()
	back := BuiltInSeedPrints()
	if len(back) != 2 {
		t.Fatalf("read back %d prints, want 2", len(back))
	}
	for k, v := range p {
		if back[k] != v {
			t.Errorf("print %x: read back %q, want %q", k, back[k], v)
		}
	}
}

// The fingerprints of the built-in course's seeds are in the binary and
// non-trivial: an empty file would make the scan pass vacuously.
func TestBuiltInSeedPrintsLoaded(t *testing.T) {
	if n := len(BuiltInSeedPrints()); n < 5000 {
		t.Errorf("only %d seed fingerprints; regenerate lessons/seedprints.txt with internal/tools/seedprints", n)
	}
}
