package grade

import (
	"fmt"
	"slices"
	"strings"
)

// The import allowlist. A lab file graded by the playground (grade, the
// lab screen, class verify) may import only what its lab needs: the
// standard library's plain packages below, the course's own labs package,
// and the lab's extras (the in-memory store for labs 02-04, etcd's client
// for 05-09). Everything else is refused before anything is built, with
// the file, the line and what to use instead. The list is what makes the
// sandbox's job small: without os, net, syscall, unsafe, reflect or
// runtime a lab's code cannot open a file, a socket or a process, read
// memory it was not given, or end the test binary early on purpose.
// `go test ./labs/...` checks nothing of this: it is the learner's own
// run on their own machine.

// commonImports are the packages every lab may import.
var commonImports = []string{
	"bytes", "cmp", "container/heap", "container/list", "container/ring",
	"context", "errors", "fmt", "hash/crc32", "hash/fnv", "iter", "log",
	"maps", "math", "math/bits", "math/rand", "math/rand/v2", "slices",
	"sort", "strconv", "strings", "sync", "sync/atomic", "time", "unicode",
	"unicode/utf8",
	ModulePath + "/labs",
}

// storeImports is the in-memory store the first labs build on.
var storeImports = []string{ModulePath + "/labs/kv"}

// etcdImports are etcd's client packages: the client brings its own
// networking, so a lab needs no net of its own.
var etcdImports = []string{
	"go.etcd.io/etcd/api/v3/mvccpb",
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes",
	"go.etcd.io/etcd/client/v3",
	"go.etcd.io/etcd/client/v3/concurrency",
}

// labExtras are the imports a lab may have beyond commonImports. A lab
// not named here gets the common list only; TestAllowlistCoversTheCourse
// fails when a stub or reference solution imports more.
var labExtras = map[string][]string{
	"02_lock":         storeImports,
	"03_lease":        storeImports,
	"04_fencing":      storeImports,
	"05_etcd_lock":    etcdImports,
	"06_fenced_write": etcdImports,
	"07_election":     etcdImports,
	"08_herd":         etcdImports,
	"09_shards":       etcdImports,
}

// AllowedImports lists, sorted, the packages lab's file may import.
func AllowedImports(lab string) []string {
	out := slices.Concat(commonImports, labExtras[lab])
	slices.Sort(out)
	return slices.Compact(out)
}

// insteadOf says, for a package a lab may not import, why and what to
// use instead; importAdvice picks the line for a path.
var insteadOf = map[string]string{
	"os":       "it opens files, reads other processes and ends the test binary; for a debug print use log or fmt (the test output shows both)",
	"net":      "the etcd client brings its own networking; a lab opens no connection of its own",
	"flag":     "the test binary's flags belong to the harness; take settings as function arguments",
	"reflect":  "a lab is plain Go: use a type switch or an interface",
	"runtime":  "a lab does not reach into the runtime; use sync for coordination and time for waiting",
	"unsafe":   "a lab is written in safe Go",
	"syscall":  "a lab needs no system calls of its own",
	"C":        "a lab is written in Go only (no cgo)",
	"plugin":   "a lab loads no code at run time",
	"testing":  "only the course's test files may",
	"io":       "a lab reads and writes no streams; return values instead",
	"log/slog": "use log or fmt for a debug print",
	"embed":    "a lab embeds no files",
}

// importAdvice is the refusal's text for an import not on lab's list.
func importAdvice(lab, path string) string {
	if strings.HasPrefix(path, ModulePath+"/labs/internal") {
		return fmt.Sprintf("imports the grader's harness (%s): a lab's answer may not depend on it", path)
	}
	key := path
	for _, p := range []string{"os", "net", "runtime", "testing", "io"} {
		if strings.HasPrefix(path, p+"/") {
			key = p
		}
	}
	if strings.HasPrefix(path, "golang.org/x/sys/") {
		key = "syscall"
	}
	why, ok := insteadOf[key]
	if !ok {
		why = "it is not among the packages this lab needs"
	}
	return fmt.Sprintf("imports %s: %s (lab %s's README lists what it may import)", path, why, lab)
}

// Markers around the generated list in each lab's README.
const (
	importsBegin = "<!-- imports: written from internal/grade/allowlist.go; go test ./internal/grade -run Readme -update-readmes -->"
	importsEnd   = "<!-- end of imports -->"
)

// importsSection is the README's section on what lab may import, markers
// included: the packages in backquotes, wrapped near 72 columns.
func importsSection(lab string) string {
	var b strings.Builder
	b.WriteString(importsBegin + "\n")
	width := 0
	for i, p := range AllowedImports(lab) {
		word := "`" + p + "`"
		if i > 0 {
			b.WriteString(",")
			width++
			if width+len(word) > 72 {
				b.WriteString("\n")
				width = 0
			} else {
				b.WriteString(" ")
				width++
			}
		}
		b.WriteString(word)
		width += len(word)
	}
	b.WriteString("\n" + importsEnd)
	return b.String()
}
