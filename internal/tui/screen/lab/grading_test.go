package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/screen"
)

// gradeFixture runs the real grader on a copy of the fixture whose stub
// is replaced by src.
func gradeFixture(t *testing.T, src string, timeout time.Duration) report {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test on the fixture module")
	}
	root := copyFixture(t)
	if src != "" {
		if err := os.WriteFile(filepath.Join(root, "labs/00_demo/demo.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := New(testContext(), Options{Lab: demoLab(), Root: root, Timeout: timeout, Course: grade.NewCourse(os.DirFS(root))})
	msg := m.job().gradeCmd(context.Background(), 7)().(gradeDoneMsg)
	if msg.seq != 7 {
		t.Fatalf("seq = %d", msg.seq)
	}
	return msg.report
}

func TestRealGradeMapsStepsAndFailure(t *testing.T) {
	r := gradeFixture(t, "", 0)
	if r.Err != nil || r.allPassed() {
		t.Fatalf("err=%v passed=%v", r.Err, r.allPassed())
	}
	if r.Steps[0].Status != grade.Pass || r.Steps[1].Status != grade.Fail {
		t.Fatalf("statuses = %v, %v", r.Steps[0].Status, r.Steps[1].Status)
	}
	if msg := strings.Join(r.Steps[1].Failure, "\n"); !strings.Contains(msg, "demo_test.go:13: Double(21) = 21, want 42") {
		t.Fatalf("failure message = %q", msg)
	}
	if r.Steps[1].Hints[1] != "Return n * 2." || r.Steps[1].Title != "Double a number" {
		t.Fatal("manifest hints and titles not joined")
	}
}

func TestRealGradeCompileErrorHasFileLine(t *testing.T) {
	r := gradeFixture(t, "package demo\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Double(n int) int { return nn }\n", 0)
	if len(r.BuildErrors) == 0 || !strings.Contains(r.BuildErrors[0], "demo.go:5:") || !strings.Contains(r.BuildErrors[0], "undefined: nn") {
		t.Fatalf("build errors = %q", r.BuildErrors)
	}
	if r.Steps[0].Status != grade.NotRun || r.allPassed() {
		t.Fatal("nothing can pass when the code does not compile")
	}
}

func TestRealGradeTimesOut(t *testing.T) {
	r := gradeFixture(t, "package demo\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Double(n int) int { for {} }\n", 2*time.Second)
	if !r.TimedOut || r.allPassed() {
		t.Fatalf("timed out = %v, message %q", r.TimedOut, r.Message)
	}
	if !strings.Contains(r.Message, "TestStep2_Doubles") {
		t.Fatalf("timeout message does not name the stuck test: %q", r.Message)
	}
}

func TestRealGradePasses(t *testing.T) {
	r := gradeFixture(t, "package demo\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Double(n int) int { return n << 1 }\n", 0)
	if !r.allPassed() {
		t.Fatalf("fixed stub not passing: %+v", r)
	}
}

// The etcd the TUI started reaches the graders once it is ready; an
// external cluster does not (Options.Env carries it).
func TestGradeOptionsUseTheStartedEtcd(t *testing.T) {
	m := New(testContext(), Options{Lab: demoLab(), Root: t.TempDir(), Env: []string{"A=1"}})
	if got := m.gradeOptions().Env; !slices.Equal(got, []string{"A=1"}) {
		t.Fatalf("before etcd: env = %v, want [A=1]", got)
	}
	m.Update(screen.EtcdReady{Etcd: fakeEtcd{}, External: true})
	if got := m.gradeOptions().Env; !slices.Equal(got, []string{"A=1"}) {
		t.Fatalf("external etcd: env = %v, want [A=1]", got)
	}
	m.Update(screen.EtcdReady{Etcd: fakeEtcd{}})
	if got := m.gradeOptions().Env; !slices.Equal(got, []string{"A=1", grade.EtcdEnv([]string{"http://127.0.0.1:1"})}) {
		t.Fatalf("started etcd: env = %v", got)
	}
}

// fakeEtcd is a running etcd as far as the screen can tell.
type fakeEtcd struct{}

func (fakeEtcd) Endpoints() []string               { return []string{"http://127.0.0.1:1"} }
func (fakeEtcd) Client() (*clientv3.Client, error) { return nil, errors.New("fake") }
func (fakeEtcd) Close() error                      { return nil }
