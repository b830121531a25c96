package grade

import (
	"flag"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

var updateReadmes = flag.Bool("update-readmes", false, "rewrite the import lists in labs/*/README.md")

// Every stub the course ships passes its own lab's allowlist (the
// reference solutions are checked by TestSolutionsPassTheLabFileCheck):
// a list that refuses the course's own files is wrong, not strict.
func TestAllowlistCoversTheCourse(t *testing.T) {
	c := Builtin()
	labs := c.Labs()
	if len(labs) < 9 {
		t.Fatalf("the course has %d labs", len(labs))
	}
	for _, lab := range labs {
		for _, name := range c.StubFiles(lab) {
			src, err := os.ReadFile(filepath.Join("../../labs", lab, name))
			if err != nil {
				t.Fatal(err)
			}
			if r := CheckLabFile(lab, path.Join("labs", lab, name), src); len(r) > 0 {
				t.Errorf("the stub is refused: %v", r)
			}
		}
	}
}

// The etcd labs may import etcd's client, the others may not: the
// lists differ where the labs do.
func TestAllowlistIsPerLab(t *testing.T) {
	const client = "go.etcd.io/etcd/client/v3"
	for lab, want := range map[string]bool{"01_cas": false, "04_fencing": false, "05_etcd_lock": true, "09_shards": true} {
		allowed := AllowedImports(lab)
		if got := contains(allowed, client); got != want {
			t.Errorf("lab %s may import %s: %v, want %v", lab, client, got, want)
		}
		for _, never := range []string{"os", "net", "net/http", "flag", "reflect", "runtime", "unsafe", "syscall"} {
			if contains(allowed, never) {
				t.Errorf("lab %s may import %s", lab, never)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Each lab's README shows the list the grader applies, between markers;
// -update-readmes writes it (before the README's "## Run", or at its end).
func TestLabReadmesListTheirImports(t *testing.T) {
	for _, lab := range Builtin().Labs() {
		file := filepath.Join("../../labs", lab, "README.md")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text, want := string(data), importsSection(lab)
		if strings.Contains(text, want) {
			continue
		}
		if !*updateReadmes {
			t.Errorf("%s does not list the imports the grader allows (go test ./internal/grade -run Readme -update-readmes writes them)", file)
			continue
		}
		if err := os.WriteFile(file, []byte(withImports(text, want)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// withImports puts section into a README: in place of an older one, else
// as a section of its own before "## Run", else at the end.
func withImports(text, section string) string {
	if i := strings.Index(text, importsBegin); i >= 0 {
		if j := strings.Index(text[i:], importsEnd); j >= 0 {
			return text[:i] + section + text[i+j+len(importsEnd):]
		}
	}
	block := "## What your file may import\n\nWhen the playground grades this lab (`playground grade`, the lab screen,\n`class verify`), your file may import only these packages; any other\nimport is refused with the line that has it. `go test` checks nothing of\nthis.\n\n" + section + "\n\n"
	if i := strings.Index(text, "## Run\n"); i >= 0 {
		return text[:i] + block + text[i:]
	}
	return strings.TrimRight(text, "\n") + "\n\n" + strings.TrimRight(block, "\n") + "\n"
}
