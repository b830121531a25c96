package experiment

import (
	"regexp"
	"strings"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/text"
)

// The hint under the timeline when the script cannot go on until the
// learner lets a replica go. It is made from the state each replica is in
// (paused, cut off, crashed) as the replica reports it, not from the
// script's sentence, so it names the key that really frees it.

// release is what frees a replica held in one way: the key and its verb.
type release struct {
	state, key, verb string
}

var (
	releasePaused  = release{state: "paused", key: "p", verb: "resume"}
	releaseCut     = release{state: "cut off", key: "x", verb: "heal"}
	releaseCrashed = release{state: "crashed", key: "r", verb: "restart"}
)

// held says how r is held, if it is: a crash first (nothing else works
// until it restarts), then a pause (which freezes its network too).
func held(r experiment.ReplicaState) (release, bool) {
	switch {
	case r.Crashed && r.Role != experiment.RoleRetired:
		return releaseCrashed, true
	case r.Paused:
		return releasePaused, true
	case r.Partitioned:
		return releaseCut, true
	}
	return release{}, false
}

// heldReplica is a replica the script waits for and how it is held.
type heldReplica struct {
	name     string
	how      release
	selected bool
}

// waitedFor is the replicas the waiting event e is about that are held
// now: the one it names, or those of rs its text names (a takeover any
// of several may make).
func waitedFor(e history.Event, rs []experiment.ReplicaState, sel int) []heldReplica {
	var out []heldReplica
	for i, r := range rs {
		how, ok := held(r)
		if !ok || (e.Replica != "" && r.Name != e.Replica) || (e.Replica == "" && !namesWord(e.Text, r.Name)) {
			continue
		}
		out = append(out, heldReplica{name: r.Name, how: how, selected: i == sel})
	}
	return out
}

// namesWord reports whether s has name as a word of its own.
func namesWord(s, name string) bool {
	return regexp.MustCompile(`(^|[^\w])` + regexp.QuoteMeta(name) + `([^\w]|$)`).MatchString(s)
}

// holdHint says, in one line of at most w cells, which replicas the
// script waits for, how they are held and the key that frees them; ""
// when none is held.
func holdHint(hs []heldReplica, w int) string {
	if len(hs) == 0 {
		return ""
	}
	names := make([]string, len(hs))
	same, selected := true, ""
	for i, h := range hs {
		names[i] = h.name
		same = same && h.how == hs[0].how
		if h.selected {
			selected = h.name
		}
	}
	who, short := orList(names), strings.Join(names, "/")
	if !same {
		return text.FirstFit(w,
			"The script waits for one of "+withStates(hs)+": select one (tab); "+keysFor(hs)+".",
			"Waiting for "+withStates(hs)+": tab selects; "+keysFor(hs)+".",
			"Waiting for "+short+": "+keysFor(hs))
	}
	how := hs[0].how
	act := "press " + how.key + " to " + how.verb + " it"
	if selected == "" {
		act = "select it (tab) and " + act
		if len(hs) > 1 {
			act = "select one (tab) and press " + how.key + " to " + how.verb + " it"
		}
	}
	state := "which is " + how.state
	if len(hs) > 1 {
		state = "all " + how.state
		if len(hs) == 2 {
			state = "both " + how.state
		}
	}
	keyText := how.key + " " + how.verb + "s"
	return text.FirstFit(w,
		"The script waits for "+who+", "+state+": "+act+".",
		"Waiting for "+who+" ("+how.state+"): "+tabIfNeeded(selected)+keyText+" it.",
		"Waiting for "+short+" ("+how.state+"): "+keyText,
		"Waiting for "+short+": "+keyText)
}

// tabIfNeeded is the advice to select first, when no waited-for replica
// is selected.
func tabIfNeeded(selected string) string {
	if selected != "" {
		return ""
	}
	return "tab selects, "
}

// orList joins names as "a2", "a2 or a3", "a2, a3 or a4".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// withStates is "a2 (paused), a3 (cut off)".
func withStates(hs []heldReplica) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.name + " (" + h.how.state + ")"
	}
	return strings.Join(parts, ", ")
}

// keysFor is "p resumes, x heals": the keys the held replicas need, each
// once, in the order they first come.
func keysFor(hs []heldReplica) string {
	var out []string
	seen := map[release]bool{}
	for _, h := range hs {
		if !seen[h.how] {
			seen[h.how] = true
			out = append(out, h.how.key+" "+h.how.verb+"s")
		}
	}
	return strings.Join(out, ", ")
}
