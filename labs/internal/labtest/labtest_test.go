package labtest

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestMainLowersTheDefaultTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	start := time.Now()
	out, err := exec.Command("go", "test", "-count=1", "./testdata/hang").CombinedOutput()
	if err == nil {
		t.Fatalf("a test that never ends passed:\n%s", out)
	}
	if !strings.Contains(string(out), "test timed out after 2s") || !strings.Contains(string(out), "TestStep1_Forever") {
		t.Fatalf("want go test's timeout report naming the test, got:\n%s", out)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("took %v", d)
	}
}

func TestMainKeepsAnExplicitTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	out, _ := exec.Command("go", "test", "-count=1", "-timeout=3s", "./testdata/hang").CombinedOutput()
	if !strings.Contains(string(out), "test timed out after 3s") {
		t.Fatalf("an explicit -timeout 3s was not kept:\n%s", out)
	}
}
