package guard

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// specOf is the sandbox spec the judge would hand the sandbox step for a
// test binary, with the environment the test has set.
func specOf(t *testing.T) sandboxSpec {
	t.Helper()
	if LandlockABI() < 1 {
		t.Skip("this kernel has no Landlock: the judge runs the binary itself")
	}
	cmd, err := sandboxedCommand([]string{"/bin/true"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, SandboxEnv+"="); ok {
			var s sandboxSpec
			if err := json.Unmarshal([]byte(v), &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatal("the sandbox step has no spec in its environment")
	return sandboxSpec{}
}

// A lab given no etcd gets no TCP: no port to connect to, no range to
// bind in (and so no 28,000 rules to add).
func TestSandboxWithoutEtcdHasNoNetwork(t *testing.T) {
	for _, name := range []string{"PLAYGROUND_GRADER_ETCD", "PLAYGROUND_ETCD_ENDPOINTS"} {
		t.Setenv(name, "")
	}
	s := specOf(t)
	if len(s.Connect) > 0 || s.Ephemeral != [2]uint16{} {
		t.Fatalf("connect %v, ephemeral %v: want none", s.Connect, s.Ephemeral)
	}
	if n := len(s.rules()); n == 0 {
		t.Fatal("no rules at all")
	}
}

// A lab given an etcd may connect to it and to the ephemeral ports its
// tests' proxies listen on.
func TestSandboxWithEtcdReachesIt(t *testing.T) {
	t.Setenv("PLAYGROUND_ETCD_ENDPOINTS", "")
	t.Setenv("PLAYGROUND_GRADER_ETCD", "http://127.0.0.1:23790,127.0.0.1:23791")
	s := specOf(t)
	if !slices.Equal(s.Connect, []uint16{23790, 23791}) {
		t.Errorf("connect %v, want the two etcd ports", s.Connect)
	}
	if s.Ephemeral[0] == 0 || s.Ephemeral[1] < s.Ephemeral[0] {
		t.Errorf("ephemeral %v, want the local port range", s.Ephemeral)
	}
}
