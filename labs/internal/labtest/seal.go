package labtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// The sealed report. When the playground grades a lab it hands this
// harness a secret key (a file named by SealEnv, read and removed while
// this package initializes, before any of the lab's own code runs) and
// reads the verdict from one line the harness prints after the tests: what
// each test function did as the harness itself saw it (runs, failures,
// skips) and m.Run's status, with an HMAC under that key. Nothing the
// learner's code prints can stand in for it: framing lines ("--- PASS",
// with or without test2json's marker) are only shown, never counted, and
// a process that ends before the report has not passed. internal/grade
// (seal.go) writes the key and checks the line; the two sides share only
// this text format:
//
//	playground-seal v1 <base64url(JSON payload)> <hex HMAC-SHA256(key, base64 text)>
//
// Without the variable (a plain `go test`) nothing here happens.
const (
	SealEnv    = "PLAYGROUND_GRADE_SEAL"
	sealPrefix = "playground-seal v1 "
)

// sealPayload is what the report says.
type sealPayload struct {
	Code  int          `json:"code"`
	Tests []sealedTest `json:"tests"`
}

type sealedTest struct {
	Name  string `json:"name"`
	Runs  int    `json:"runs"`
	Fails int    `json:"fails"`
	Skips int    `json:"skips"`
}

// sealer records what the tests did, for the report.
type sealer struct {
	key []byte
	out *os.File // standard output as it was before the lab's code ran

	mu    sync.Mutex
	tests map[string]*sealedTest
	order []string
}

// seal is read while this package initializes: the lab's package imports
// labtest (through its tests or the etcd harness), so this runs before any
// of the learner's init functions could read the key file or the variable.
var seal = openSeal()

func openSeal() *sealer {
	path := os.Getenv(SealEnv)
	if path == "" {
		return nil
	}
	os.Unsetenv(SealEnv)
	data, err := os.ReadFile(path)
	os.Remove(path)
	key, herr := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || herr != nil || len(key) < 16 {
		// The report will be missing and the grader says so.
		fmt.Fprintf(os.Stderr, "labtest: the grader's key could not be read from %s\n", path)
		return nil
	}
	return &sealer{key: key, out: os.Stdout, tests: map[string]*sealedTest{}}
}

// watch wraps every test function of m so that the harness sees each run
// end: t.Cleanup runs after the test and all its subtests, parallel ones
// included, whether it passed, failed, skipped or called FailNow. testing.M
// keeps its tests unexported; reflect finds them and unsafe makes them
// writable (this is the course's code: the learner's files may use
// neither).
func (s *sealer) watch(m *testing.M) bool {
	f := reflect.ValueOf(m).Elem().FieldByName("tests")
	if !f.IsValid() || f.Type() != reflect.TypeFor[[]testing.InternalTest]() {
		fmt.Fprintln(os.Stderr, "labtest: this Go version's testing.M has no tests field; the grade cannot be sealed")
		return false
	}
	tests := *(*[]testing.InternalTest)(unsafe.Pointer(f.UnsafeAddr()))
	for i := range tests {
		name, run := tests[i].Name, tests[i].F
		tests[i].F = func(t *testing.T) {
			t.Cleanup(func() { s.record(name, t.Failed(), t.Skipped()) })
			run(t)
		}
	}
	return true
}

func (s *sealer) record(name string, failed, skipped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.tests[name]
	if st == nil {
		st = &sealedTest{Name: name}
		s.tests[name] = st
		s.order = append(s.order, name)
	}
	st.Runs++
	switch {
	case failed:
		st.Fails++
	case skipped:
		st.Skips++
	}
}

// report prints the sealed line for m.Run's status code.
func (s *sealer) report(code int) {
	s.mu.Lock()
	p := sealPayload{Code: code, Tests: []sealedTest{}}
	for _, n := range s.order {
		p.Tests = append(p.Tests, *s.tests[n])
	}
	s.mu.Unlock()
	data, err := json.Marshal(p)
	if err != nil {
		return
	}
	body := base64.RawURLEncoding.EncodeToString(data)
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(body))
	fmt.Fprintf(s.out, "\n%s%s %s\n", sealPrefix, body, hex.EncodeToString(mac.Sum(nil)))
}
