package experiment

import (
	"fmt"

	"github.com/ownership-election/playground/internal/history"
)

// monitor watches the event stream as it comes for the two things that
// must never happen, two replicas acting as owner at once and a write
// from a stale owner being accepted, and flags them at once with an
// InvariantViolated event, so the screen can point at them while the run
// goes on. It follows the checker's rules (a paused replica does not act
// until it does something as owner after it resumes); the verdict is the
// checker's, computed from the whole history.
type monitor struct {
	owners      map[string]int64 // replica -> token it believes it owns with
	paused      map[string]bool
	maxToken    int64
	twoOwners   int
	staleWrites int
	lastSet     string // the owner set last reported, so each is reported once
}

func (m *monitor) observe(e history.Event) []history.Event {
	if m.owners == nil {
		m.owners, m.paused = map[string]int64{}, map[string]bool{}
	}
	switch e.Kind {
	case history.Acquired:
		m.owners[e.Replica] = e.Token
		m.maxToken = max(m.maxToken, e.Token)
		return m.checkOwners(e.Replica, "acquired")
	case history.Lost, history.SteppedDown, history.Released, history.Crashed:
		delete(m.owners, e.Replica)
		m.lastSet = ""
		if e.Kind == history.Crashed {
			delete(m.paused, e.Replica)
		}
	case history.Paused:
		m.paused[e.Replica] = true
	case history.Resumed:
		delete(m.paused, e.Replica)
	case history.WriteAccepted, history.WriteRejected:
		var out []history.Event
		if _, owner := m.owners[e.Replica]; owner {
			out = m.checkOwners(e.Replica, "wrote")
		}
		if e.Kind == history.WriteAccepted && e.Token < m.maxToken {
			m.staleWrites++
			out = append(out, history.Event{Kind: history.InvariantViolated, Replica: e.Replica, Token: e.Token,
				Text: fmt.Sprintf("stale write accepted: token %d after token %d was issued", e.Token, m.maxToken)})
		}
		return out
	}
	return nil
}

// checkOwners reports a violation when more than one replica that is not
// paused believes it is the owner.
func (m *monitor) checkOwners(who, did string) []history.Event {
	acting := map[string]int64{}
	for n, tok := range m.owners {
		if !m.paused[n] {
			acting[n] = tok
		}
	}
	if len(acting) < 2 {
		m.lastSet = ""
		return nil
	}
	set := names(acting)
	if set == m.lastSet {
		return nil
	}
	m.lastSet = set
	m.twoOwners++
	return []history.Event{{Kind: history.InvariantViolated, Replica: who,
		Text: fmt.Sprintf("two owners at once (%s %s): %s", who, did, set)}}
}
