package cli

import "testing"

// BenchmarkLoadCourse times reading and checking the built-in course, which
// the TUI does before its first frame.
func BenchmarkLoadCourse(b *testing.B) {
	env := &Env{}
	for b.Loop() {
		if _, _, err := loadCourse(env, ""); err != nil {
			b.Fatal(err)
		}
	}
}
