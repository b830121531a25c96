package attacks

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// Attack 1, a forged verified grade: a lab file whose init() reads the
// test process's own memory (/proc/self/maps, /proc/self/mem) for the
// seal key, prints a report signed with every 64-hex string it found,
// and makes the flag package print its usage and exit 0 before any test
// runs. A safe system: the allowlist refuses the file (os, flag, the
// crypto it needs); past it, the key is not in that process to find, so
// no forged report counts, and a binary that ended before the harness
// reported passed nothing.
func TestAttackForgedSeal(t *testing.T) {
	payload, _ := json.Marshal(map[string]any{"code": 0, "tests": forgedTests()})
	code := strings.ReplaceAll(forgedSealInit, "PAYLOAD", base64.RawURLEncoding.EncodeToString(payload))
	src := hostile(t, []string{"crypto/hmac", "crypto/sha256", "encoding/hex", "flag", "os", "regexp", "strconv", "strings"}, code)
	mustRefuse(t, src, "labs/01_cas/cas.go:", "imports os:", "imports flag:", "imports crypto/hmac:")

	res := gradePast(t, src, nil)
	out := output(res)
	lines := attackLines(out)
	if len(lines) == 0 || !strings.Contains(out, "attack: reading own memory") {
		t.Fatalf("the attack did not run (it prints what it read); the run ended with %q:\n%s", res.Message, out)
	}
	t.Logf("the attack said: %s", strings.Join(lines, " | "))
	if res.Passed {
		t.Fatalf("a forged report passed the lab: %s", strings.Join(lines, "\n"))
	}
	for _, tt := range res.Tests {
		if tt.Status == grade.Pass {
			t.Errorf("%s counted as passed", tt.Name)
		}
	}
	// Either message says the truth: no test ran, no report came.
	if !strings.Contains(res.Message, "before running any test") && !strings.Contains(res.Message, "ended before the grader's harness reported") {
		t.Errorf("message %q, want one saying the binary ended before any test ran or any report came", res.Message)
	}
}

func forgedTests() []map[string]any {
	var tests []map[string]any
	for _, s := range lab01Steps {
		tests = append(tests, map[string]any{"name": s, "runs": 1, "fails": 0, "skips": 0})
	}
	return tests
}

// forgedSealInit is the attack's code; PAYLOAD is the report it forges.
const forgedSealInit = `
func init() {
	maps, err := os.ReadFile("/proc/self/maps")
	mem, merr := os.Open("/proc/self/mem")
	keyLike := regexp.MustCompile("[0-9a-f]{64}")
	found := map[string]bool{}
	fmt.Println("attack: reading own memory")
	budget := uint64(64 << 20)
	if err == nil && merr == nil {
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || !strings.HasPrefix(f[1], "rw") {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			b, _ := strconv.ParseUint(hi, 16, 64)
			if budget == 0 {
				break
			}
			buf := make([]byte, min(b-a, 8<<20, budget)) // the start of each region, 64 MiB in all: enough for a key on the heap, quick under load
			budget -= uint64(len(buf))
			n, _ := mem.ReadAt(buf, int64(a))
			for _, k := range keyLike.FindAll(buf[:n], -1) {
				found[string(k)] = true
			}
		}
	}
	fmt.Printf("attack: read own memory: maps %v, mem %v, %d key-like strings\n", err, merr, len(found))
	body := "PAYLOAD"
	for k := range found {
		key, _ := hex.DecodeString(k)
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(body))
		fmt.Printf("\nplayground-seal v1 %s %x\n", body, mac.Sum(nil))
	}
	flag.CommandLine.Parse([]string{"-h"})
}`
