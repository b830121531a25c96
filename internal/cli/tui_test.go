package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultCommandPrintsOutlineWithoutTerminal(t *testing.T) {
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	var out, errb bytes.Buffer
	code := Main(context.Background(), nil, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"01  Do you need an election?", "quiz do-you-need-an-election", "not a terminal", "playground quiz ID --plain"} {
		if !strings.Contains(s, want) {
			t.Errorf("outline lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b") {
		t.Errorf("outline has escape codes: %q", s)
	}
}

func TestDefaultCommandUsesContentDir(t *testing.T) {
	var out, errb bytes.Buffer
	dir := filepath.Join("..", "tui", "testdata", "course")
	code := Main(context.Background(), []string{"--content", dir}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "01  First steps with a test course") || strings.Contains(out.String(), "Do you need an election") {
		t.Fatalf("outline is not the --content course:\n%s", out.String())
	}
}

func TestDefaultCommandRejectsArguments(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"nonsense"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Fatalf("exit %d for an unknown command, want 2", code)
	}
}
