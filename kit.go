// Package playground holds the course's own copy of everything a lab is
// built from, embedded in the binary: the labs (stubs, grader tests,
// manifests, READMEs), the harness and etcd packages their tests import,
// and go.mod and go.sum. Grading builds each lab from these copies plus
// only the learner's stub files, and `playground init` writes them out as
// a module of its own.
package playground

import (
	"embed"
	"io/fs"
)

//go:embed go.mod go.sum labs/labs.go
//go:embed labs/[0-9][0-9]_*/lab.yaml labs/[0-9][0-9]_*/README.md labs/[0-9][0-9]_*/*.go
//go:embed labs/kv/*.go labs/internal/labtest/*.go labs/internal/etcdharness/*.go labs/internal/etcdserver/*.go
//go:embed embedetcd/*.go embedetcd/access/*.go embedetcd/prefix/*.go
//go:embed internal/faultproxy/*.go internal/statedir/*.go internal/atomicfile/*.go
var kit embed.FS

// Kit returns the embedded course files, laid out as in the repository
// (go.mod, labs/01_cas/cas.go, labs/internal/labtest/labtest.go, ...).
// The helper packages' own tests are in it too; internal/grade's Course
// leaves them out of what it builds and writes.
func Kit() fs.FS { return kit }
