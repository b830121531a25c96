package textdiff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	ten := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{
			name: "identical",
			old:  ten, new: ten,
			want: "",
		},
		{
			name: "both empty",
			want: "",
		},
		{
			name: "insert in the middle",
			old:  ten,
			new:  "1\n2\n3\n4\n5\nfive and a half\n6\n7\n8\n9\n10\n",
			want: "--- a\n+++ b\n@@ -3,6 +3,7 @@\n 3\n 4\n 5\n+five and a half\n 6\n 7\n 8\n",
		},
		{
			name: "delete at the top",
			old:  ten,
			new:  "2\n3\n4\n5\n6\n7\n8\n9\n10\n",
			want: "--- a\n+++ b\n@@ -1,4 +1,3 @@\n-1\n 2\n 3\n 4\n",
		},
		{
			name: "change at the end",
			old:  ten,
			new:  "1\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
			want: "--- a\n+++ b\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n",
		},
		{
			name: "two changes far apart make two hunks",
			old:  ten,
			new:  "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
			want: "--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n",
		},
		{
			name: "two changes close together share a hunk",
			old:  ten,
			new:  "1\n2\nthree\n4\n5\n6\n7\neight\n9\n10\n",
			want: "--- a\n+++ b\n@@ -1,10 +1,10 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n-8\n+eight\n 9\n 10\n",
		},
		{
			name: "empty old file",
			old:  "",
			new:  "package demo\n",
			want: "--- a\n+++ b\n@@ -0,0 +1 @@\n+package demo\n",
		},
		{
			name: "empty new file",
			old:  "a\nb\n",
			new:  "",
			want: "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-a\n-b\n",
		},
		{
			name: "no newline at the end of the new file",
			old:  "a\nb\n",
			new:  "a\nb",
			want: "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n",
		},
		{
			name: "no newline at the end of either file",
			old:  "a\nb",
			new:  "a\nc",
			want: "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
		},
		{
			name: "pure insertion after the last line",
			old:  "a\n",
			new:  "a\nb\n",
			want: "--- a\n+++ b\n@@ -1 +1,2 @@\n a\n+b\n",
		},
		{
			name: "deletions come before insertions",
			old:  "x\na\nb\ny\n",
			new:  "x\nc\nd\ny\n",
			want: "--- a\n+++ b\n@@ -1,4 +1,4 @@\n x\n-a\n-b\n+c\n+d\n y\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unified("a", "b", tc.old, tc.new, 3); got != tc.want {
				t.Errorf("Unified:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// An insertion into an empty region of the old text is numbered after the
// line it follows, as diff -u does: "@@ -3,0 +4 @@" with no context.
func TestHunkWithoutContext(t *testing.T) {
	h := Hunks("a\nb\nc\n", "a\nb\nc\nd\n", 0)
	if len(h) != 1 || h[0].Header() != "@@ -3,0 +4 @@" {
		t.Fatalf("hunks = %+v", h)
	}
	h = Hunks("a\nb\nc\n", "a\nc\n", 0)
	if len(h) != 1 || h[0].Header() != "@@ -2 +1,0 @@" {
		t.Fatalf("hunks = %+v", h)
	}
}

func TestLinesNumbersBothSides(t *testing.T) {
	got := Lines("a\nb\nc\n", "a\nx\nc\n")
	want := []Line{
		{Op: Equal, Text: "a", Old: 1, New: 1},
		{Op: Delete, Text: "b", Old: 2},
		{Op: Insert, Text: "x", New: 2},
		{Op: Equal, Text: "c", Old: 3, New: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("Lines = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// The edit script rebuilds both texts and is as short as a longest common
// subsequence allows, on random texts over a small alphabet (many
// repeated lines, the hard case for a diff).
func TestScriptIsMinimalAndRebuildsBoth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(string(rune('a'+r.IntN(3))) + "\n")
		}
		return b.String()
	}
	for i := range 2000 {
		old, new := gen(), gen()
		var gotOld, gotNew strings.Builder
		equal := 0
		for _, l := range Lines(old, new) {
			if l.Op != Insert {
				gotOld.WriteString(l.Text + "\n")
			}
			if l.Op != Delete {
				gotNew.WriteString(l.Text + "\n")
			}
			if l.Op == Equal {
				equal++
			}
		}
		if gotOld.String() != old || gotNew.String() != new {
			t.Fatalf("case %d: script does not rebuild the texts\nold %q new %q", i, old, new)
		}
		if want := lcs(split(old), split(new)); equal != want {
			t.Fatalf("case %d: %d equal lines, a longest common subsequence has %d\nold %q new %q", i, equal, want, old, new)
		}
	}
}

func lcs(a, b []line) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// Texts too different for the bounded search still give a correct diff.
func TestHugeRewriteIsOneReplacement(t *testing.T) {
	var a, b strings.Builder
	for i := range maxEdits + 10 {
		a.WriteString("old " + string(rune('a'+i%26)) + "\n")
		b.WriteString("new " + string(rune('a'+i%26)) + "\n")
	}
	h := Hunks(a.String(), b.String(), 3)
	if len(h) != 1 || h[0].OldLines != maxEdits+10 || h[0].NewLines != maxEdits+10 {
		t.Fatalf("got %d hunks, first %+v", len(h), h[0].Header())
	}
}
