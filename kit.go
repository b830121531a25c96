// Package playground holds the course's own copy of everything a lab is
// built from, embedded in the binary: the labs (stubs, grader tests,
// manifests, READMEs, the stubs' sums), the harness and etcd packages
// their tests import, and go.mod and go.sum. Grading builds each lab from
// these copies plus only the learner's stub files, and `playground init`
// writes them out as a module of its own.
//
// It also holds what a lab run builds but a learner's folder does not
// get (internal/grade's Course.Dir only): the replica programs of the
// labs with a runner and the harness they start with (so that the
// harness always speaks the protocol of the binary that drives it,
// wherever the learner's code is), those labs' reference solutions,
// which explore runs beside the learner's code, and the guard program
// that stands around every grading (internal/grade/guard: supervisor,
// judge and sandbox step), built there once. A program installed with
// go install has the module's source, solutions included, in the module
// cache anyway; the learner's folder keeps only what they edit and test.
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
//go:embed labs/stubs.sum
//go:embed internal/grade/guard/*.go internal/grade/guardcmd/*.go
//go:embed internal/labrun/replica/*.go internal/labrun/lock05/*.go internal/labrun/fenced06/*.go internal/labrun/election07/*.go internal/labrun/herd08/*.go internal/labrun/shards09/*.go
//go:embed solutions/05_etcd_lock/*.go solutions/06_fenced_write/*.go solutions/07_election/*.go solutions/08_herd/*.go solutions/09_shards/*.go
var kit embed.FS

// Kit returns the embedded course files, laid out as in the repository
// (go.mod, labs/01_cas/cas.go, labs/internal/labtest/labtest.go, ...).
// The helper packages' own tests are in it too; internal/grade's Course
// leaves them out of what it builds and writes.
func Kit() fs.FS { return kit }
