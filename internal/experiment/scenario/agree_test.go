package scenario

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/history"
)

// checkTextsAgree: every event that carries etcd's (or the resource's)
// answer says what that answer was, never the opposite.
func checkTextsAgree(t *testing.T, events []history.Event) {
	t.Helper()
	for _, e := range events {
		if msg := disagreement(e); msg != "" {
			t.Errorf("%.3fs %s %s %q: %s (facts %+v)", e.At.Seconds(), e.Kind, e.Replica, e.Text, msg, *e.Facts)
		}
	}
}

// disagreement says how an event's text contradicts its facts ("" if it
// does not).
func disagreement(e history.Event) string {
	f := e.Facts
	if f == nil {
		return ""
	}
	has := func(s string) bool { return strings.Contains(e.Text, s) }
	switch {
	case e.Kind == history.LeaseGranted && !has(history.TTLLabel(f.GrantedTTL)):
		return "a grant that does not name the TTL etcd granted"
	case e.Kind == history.Acquired && !has(fmt.Sprint(e.Token)):
		return "an acquisition that does not name its token"
	case e.Kind == history.Acquired && f.Op == "txn" && !f.Succeeded:
		return "an acquisition whose create-if-absent failed"
	case e.Kind == history.WriteAccepted && (!f.Succeeded || !has("accepted")):
		return "an accepted write the resource refused"
	case e.Kind == history.WriteRejected && (f.Succeeded || !has("rejected")):
		return "a refused write the resource took"
	case f.Deleted == 0 && f.Key != "" && has("deleted "+f.Key):
		return "says it deleted a key etcd did not delete"
	case f.Deleted > 0 && e.Kind != history.KeyChanged && !has("deleted "+f.Key):
		return "does not say etcd deleted the key"
	case len(f.Prev) > 0 && e.Kind != history.KeyChanged && !has(upper(f.Prev[0].Value)) && !has(f.Prev[0].Value):
		return "does not say whose key the delete removed"
	case f.Op == "txn" && !f.Succeeded && e.Kind == history.Released && !has("refused"):
		return "an unlock etcd refused, told as done"
	}
	return ""
}
