package quiz

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the parser. Parse must never panic,
// and a quiz it accepts without problems must be safe to shuffle, to type
// answers into and to grade, with scores between 0 and 1.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		qz, probs := Parse("fuzz.yaml", data)
		for _, p := range probs {
			if p.Path != "fuzz.yaml" || p.Line < 0 || p.Msg == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		if qz == nil || len(probs) > 0 {
			return
		}
		for _, q := range qz.Questions {
			display := Shuffle(q, "fuzzer")
			if len(display) != q.Choices() {
				t.Fatalf("question %s: shuffle of %d choices has %d", q.ID, q.Choices(), len(display))
			}
			for _, in := range []string{"1", "1,2", "2 1", "3 2 1", "19", "none"} {
				r, err := ParseInput(q, display, in)
				if err != nil {
					continue
				}
				res, err := Grade(q, r)
				if err != nil {
					t.Fatalf("question %s: input %q parsed but did not grade: %v", q.ID, in, err)
				}
				if res.Score < 0 || res.Score > 1 || res.Correct != (res.Score == 1) {
					t.Fatalf("question %s: input %q scored %v (correct %v)", q.ID, in, res.Score, res.Correct)
				}
			}
		}
	})
}
