package grade

import (
	"path"
	"path/filepath"
	"strings"
)

// etcdFailure is how the etcd harness begins a test's failure when the
// grader's etcd is not there (labs/internal/etcdharness).
const etcdFailure = "etcd for the grader:"

// NotGradable says why a grading tells nothing about the learner's code,
// "" when it does: the grading could not run (no go command), the build
// failed somewhere no lab file caused (a broken build cache, a missing
// module, a go command that stops before building), or the tests could
// not reach their etcd. err is the error
// Grade or Verify returned.
func NotGradable(r *Report, err error) string {
	switch {
	case err != nil && !isCanceled(err):
		return err.Error()
	case r == nil:
		return ""
	case r.Status == LabError:
		return r.Message
	}
	res := r.Result
	if r.Verify != nil {
		res = r.Verify.Result
	}
	if res == nil {
		return ""
	}
	switch {
	case res.BuildFailed && !labCaused(res, r.Lab):
		return "the build failed outside the lab's files: " + r.Message
	case !res.BuildFailed && !res.Started && len(res.Tests) == 0 && res.TimedOut:
		// The backstop stopped a build that took too long (a cold build
		// cache on a busy machine): no test ran.
		return "the build did not finish in time: " + res.Message
	case !res.BuildFailed && !res.Started && len(res.Tests) == 0:
		// The go command gave up before it built or ran anything.
		return "the go command could not run the tests: " + firstNonEmpty(append(append([]string{}, res.Stderr...), res.Output...))
	}
	for _, t := range res.Tests {
		for _, l := range t.Failure {
			if strings.Contains(l, etcdFailure) {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

// labCaused reports whether a failed build points at a file of the lab's
// folder (its stub, or a test that no longer fits the stub).
func labCaused(res *Result, lab string) bool {
	for _, e := range res.BuildErrors {
		f := path.Clean(filepath.ToSlash(e.File))
		if path.Base(path.Dir(f)) == lab || !strings.Contains(f, "/") {
			return true
		}
	}
	return false
}
