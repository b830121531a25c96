package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/progress"
)

// TestClassVerifyRegrades: two learners claim a pass of lab 01; one
// submitted the reference solution, the other the untouched stub (as a
// learner who forged their summary would). class verify regrades both
// files with the course in child processes: the first is verified, the
// second refused with the reason, the board says so, and a second run
// regrades nothing. It runs outside a checkout.
func TestClassVerifyRegrades(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more): builds the playground and grades lab 01 twice; make test runs it")
	}
	bin := filepath.Join(t.TempDir(), "playground")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/playground")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the playground: %v\n%s", err, out)
	}
	t.Setenv("PLAYGROUND_SELF", bin)
	c, asRoot := classCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	root := instructor(t, c)
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}, {Name: "bob"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	solution, err := os.ReadFile("../../solutions/01_cas/cas.go")
	if err != nil {
		t.Fatal(err)
	}
	stub, err := exec.Command("git", "show", "HEAD:labs/01_cas/cas.go").Output()
	if err != nil {
		t.Skipf("no git history to read the shipped stub from: %v", err)
	}
	for i, src := range [][]byte{solution, stub} {
		claimPass(t, ctx, c.Plain, actions[i], src)
	}
	// Outside any checkout: the regrade needs the course built into the
	// program and the submitted file, nothing else.
	t.Chdir(t.TempDir())

	code, out, errOut := runCLI(t, append(asRoot, "class", "verify")...)
	if code != 0 {
		t.Fatalf("class verify: exit %d\n%s%s", code, out, errOut)
	}
	if line := lineWith(out, "ada"); !strings.Contains(line, "01_cas") || !strings.Contains(line, "verified") {
		t.Errorf("ada's reference solution: %q, want verified\n%s", line, out)
	}
	if line := lineWith(out, "bob"); !strings.Contains(line, "refused: fail") || !strings.Contains(line, "TestStep1") {
		t.Errorf("bob's stub: %q, want refused, naming the failing step\n%s", line, out)
	}
	code, out, _ = runCLI(t, append(asRoot, "class", "verify")...)
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("a second verify with nothing new: exit %d, %q (want nothing regraded)", code, out)
	}
	code, out, _ = runCLI(t, append(asRoot, "class", "status", "--json")...)
	var doc struct {
		Learners []struct {
			Learner      string        `json:"learner"`
			LabsPassed   int           `json:"labs_passed"`
			LabsVerified int           `json:"labs_verified"`
			Checks       []class.Check `json:"checks"`
		} `json:"learners"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Learners) != 2 {
		t.Fatalf("class status --json: exit %d, %v\n%s", code, err, out)
	}
	if a := doc.Learners[0]; a.LabsVerified != 1 || a.LabsPassed != 1 {
		t.Errorf("ada on the board: %+v, want 01_cas verified", a)
	}
	if b := doc.Learners[1]; b.LabsPassed != 0 || !strings.Contains(strings.Join(checkStates(b.Checks), " "), "refused") {
		t.Errorf("bob on the board: %+v, want 01_cas refused and not counted", b)
	}
}

// claimPass publishes, as the learner, a summary with lab 01 passed and
// src as its submission.
func claimPass(t *testing.T, ctx context.Context, plain access.Settings, a class.Action, src []byte) {
	t.Helper()
	s := plain
	s.User, s.Password = a.Learner, a.Password
	r, err := embedetcd.Connect(ctx, s, class.Prefix(a.Learner))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cli, err := r.Client()
	if err != nil {
		t.Fatal(err)
	}
	p := progress.New()
	p.RecordLabPassed("consensus-and-cas", "01_cas", time.Now())
	if err := class.NewPublisher(cli.KV).Publish(ctx, class.FromProgress(a.Learner, p)); err != nil {
		t.Fatal(err)
	}
	sub, err := class.NewSubmission("01_cas", "cas.go", src, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Publish(ctx, cli.KV); err != nil {
		t.Fatal(err)
	}
}

func checkStates(cs []class.Check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.State))
	}
	return out
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
