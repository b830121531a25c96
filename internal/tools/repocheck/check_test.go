package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write puts files into a fresh root and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		writeFile(t, root, name, body)
	}
	return root
}

func writeFile(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(files map[string]string) []string {
	var out []string
	for f := range files {
		out = append(out, f)
	}
	return out
}

// longFunc returns Go source with a function of n lines in all.
func longFuncSrc(recv, name string, n int) string {
	var b strings.Builder
	b.WriteString("package p\n\ntype T struct{}\n\nfunc " + recv + name + "() {\n")
	for i := 0; i < n-2; i++ {
		b.WriteString("\t_ = 1\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func TestLongFunctionsAreFoundAndListedOnesPass(t *testing.T) {
	files := map[string]string{
		"a/a.go":              longFuncSrc("(t *T) ", "Long", 81),
		"a/b.go":              longFuncSrc("", "Fine", 80),
		"a/a_test.go":         longFuncSrc("", "TestLong", 200),
		"internal/tools/x.go": longFuncSrc("", "Tool", 200),
	}
	root := write(t, files)
	var out bytes.Buffer
	err := run(&out, root, names(files))
	if err == nil || !strings.Contains(out.String(), "a/a.go:5: T.Long is 81 lines") {
		t.Fatalf("81-line method not reported: err=%v\n%s", err, out.String())
	}
	// The tools are held to the limit like the rest (issue 32).
	if !strings.Contains(out.String(), "internal/tools/x.go:5: Tool is 200 lines") {
		t.Fatalf("a tool's long function was not reported:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Fine") || strings.Contains(out.String(), "TestLong") {
		t.Fatalf("a test's or a short function was reported:\n%s", out.String())
	}

	files[".long-functions"] = "a/a.go T.Long -- someone: splitting it\ninternal/tools/x.go Tool -- someone: splitting it\na/gone.go F -- someone: split already\n"
	root = write(t, files)
	out.Reset()
	if err := run(&out, root, names(files)); err != nil {
		t.Fatalf("listed function still fails: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "a/gone.go F is no longer over") {
		t.Fatalf("stale entry not noted:\n%s", out.String())
	}
}

func TestLargeFilesFailUnlessListedWithAReason(t *testing.T) {
	big := strings.Repeat("x", MaxFileBytes+1)
	files := map[string]string{"bin/tool": big, "fixtures/db.snap": big, "small.txt": "x"}
	root := write(t, files)
	var out bytes.Buffer
	if err := run(&out, root, names(files)); err == nil || !strings.Contains(out.String(), "bin/tool:") ||
		!strings.Contains(out.String(), "fixtures/db.snap:") || strings.Contains(out.String(), "small.txt") {
		t.Fatalf("large files not reported as they should be: err=%v\n%s", err, out.String())
	}

	files[".large-files"] = "fixtures/** -- a snapshot the restore test needs\n"
	root = write(t, files)
	out.Reset()
	if err := run(&out, root, names(files)); err == nil || strings.Contains(out.String(), "fixtures/db.snap") ||
		!strings.Contains(out.String(), "bin/tool:") {
		t.Fatalf("listed fixture should pass, the binary fail: err=%v\n%s", err, out.String())
	}

	files[".large-files"] = "fixtures/**\n"
	root = write(t, files)
	if err := run(&out, root, names(files)); err == nil || !strings.Contains(err.Error(), "reason is required") {
		t.Fatalf("an entry without a reason must be refused, got %v", err)
	}
}

// TestReadmeTableNamesEveryPackageFolder: a package folder the README's
// table leaves out is reported; labs, solutions and tools are covered by
// their pattern rows.
func TestReadmeTableNamesEveryPackageFolder(t *testing.T) {
	files := map[string]string{
		"README.md":             "| folder | what |\n|---|---|\n| `lessons/` | the course |\n| `labs/NN_slug/` | labs |\n| `internal/tools/` | tools |\n",
		"lessons/a.go":          "package lessons\n",
		"labs/01_cas/cas.go":    "package cas\n",
		"internal/tools/x/x.go": "package main\n",
		"quiz/q.go":             "package quiz\n",
		"quiz/testdata/t.go":    "package t\n",
	}
	root := write(t, files)
	var out bytes.Buffer
	err := run(&out, root, names(files))
	if err == nil || !strings.Contains(out.String(), "does not name quiz/") || strings.Count(out.String(), "does not name") != 1 {
		t.Fatalf("want only quiz/ reported: err=%v\n%s", err, out.String())
	}
}
