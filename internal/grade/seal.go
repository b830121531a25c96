package grade

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ownership-election/playground/internal/grade/guard"
	"github.com/ownership-election/playground/internal/sanitize"
)

// The sealed report (labs/internal/labtest/seal.go has the harness's
// side, guard/judge.go the judge's). With Options.Seal, Run makes a
// fresh random key for the run, hands it to the judge (the guard
// program, the go command's -exec) and counts a test as passed only when the
// harness's report, signed by the judge with that key, says so. The test
// binary, where the lab's code runs, never holds the key: its harness
// writes the report unsigned on a pipe only the judge reads.
//
// What it resists: anything the learner's code prints (fake "--- PASS"
// lines, test2json's ^V marker, a fake report, copies of PASS), ending
// the process early (no report: not passed), changing the test flags so
// that steps do not run (the report lists what ran), replaying a report
// from an earlier run (a new key every run), and reading the key out of
// the test process's memory (it is not there). What it does not: a
// learner who changes the playground itself, or lab code that breaks
// Go's memory safety without unsafe (a data race on an interface value)
// to write on the harness's pipe; the allowlist and the race detector's
// runs make that hard, not impossible. A class's passes are claims until
// `class verify` regrades the submitted file with the instructor's own
// copy of the course.
const sealPrefix = guard.SealPrefix

// sealReport is what the harness's report says.
type sealReport struct {
	Code  int          `json:"code"`
	Tests []sealedTest `json:"tests"`
}

type sealedTest struct {
	Name  string `json:"name"`
	Runs  int    `json:"runs"`
	Fails int    `json:"fails"`
	Skips int    `json:"skips"`
}

// newSealKey returns a random key and the environment entry that hands
// it to the judge.
func newSealKey() ([]byte, string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("seal key: %w", err)
	}
	return key, guard.JudgeEnv + "=" + hex.EncodeToString(key), nil
}

// checkSeal looks at one line the test binary printed; a report signed
// with res's key is kept, anything else is only output.
func (res *Result) checkSeal(line string) {
	i := strings.Index(line, sealPrefix)
	if res.sealKey == nil || i < 0 {
		return
	}
	body, mac, ok := strings.Cut(strings.TrimSpace(line[i+len(sealPrefix):]), " ")
	if !ok {
		return
	}
	want := hmac.New(sha256.New, res.sealKey)
	want.Write([]byte(body))
	got, err := hex.DecodeString(mac)
	if err != nil || !hmac.Equal(got, want.Sum(nil)) {
		return
	}
	data, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return
	}
	var rep sealReport
	if json.Unmarshal(data, &rep) == nil {
		sanitize.Strings(&rep) // its test names are printed
		res.sealed = &rep
	}
}

// noReport is the message of a sealed run whose harness never reported.
const noReport = "the test binary ended before the grader's harness reported the result, so no step counts: something in the lab's code ended the process or kept the report from being written"

// applySeal makes the harness's report the verdict of a sealed run: a
// test passed only when the report has it run and never fail, and without
// a report nothing passed. The output (what was printed) stays as it was
// for the learner to read.
func (res *Result) applySeal() {
	if res.sealKey == nil || res.BuildFailed {
		return
	}
	rep := res.sealed
	if rep == nil {
		res.Passed = false
		for _, t := range res.Tests {
			if t.Status == Pass || t.Status == Skip {
				t.Status = NotRun
			}
		}
		if res.Message == "" {
			res.Message = noReport
		}
		return
	}
	seen := map[string]sealedTest{}
	for _, st := range rep.Tests {
		seen[st.Name] = st
	}
	for _, t := range res.Tests {
		res.sealTest(t, seen[t.Name])
		delete(seen, t.Name)
	}
	for _, st := range rep.Tests {
		if _, left := seen[st.Name]; left {
			t := &Test{Name: st.Name, Status: NotRun}
			res.byName[st.Name], res.Tests = t, append(res.Tests, t)
			res.sealTest(t, st)
		}
	}
	if rep.Code != 0 {
		res.Passed = false
		// A failing step says why itself; otherwise say what the run did.
		failed := slices.ContainsFunc(rep.Tests, func(st sealedTest) bool { return st.Fails > 0 })
		if res.Message == "" && !failed {
			res.Message = fmt.Sprintf("the tests ended with status %d", rep.Code)
		}
	}
}

// sealTest settles one test from its line in the report (zero when the
// report does not have it: it did not run).
func (res *Result) sealTest(t *Test, st sealedTest) {
	t.Runs = st.Runs
	switch {
	case st.Runs == 0:
		if t.Status == Pass || t.Status == Skip {
			t.Status = NotRun
		}
	case st.Fails > 0:
		t.Fails = max(t.Fails, st.Fails)
		if t.Status != Fail {
			t.Status = Fail
			t.Failure = append(t.Failure, "(the harness saw this test fail, whatever the output says)")
		}
		res.Passed = false
	case st.Skips == st.Runs:
		t.Status = Skip
	default:
		t.Status = Pass
		t.Fails = 0
	}
}
