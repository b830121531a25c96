package content

import (
	"strings"
	"testing"

	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

// question loads the embedded course and returns the question with id.
func question(t *testing.T, id string) *quiz.Question {
	t.Helper()
	c, problems := lessons.Load(Sources())
	if c == nil {
		t.Fatalf("load the course: %v", problems)
	}
	q, _ := c.Question(id)
	if q == nil {
		t.Fatalf("no question %s in the course", id)
	}
	return q
}

// option returns the option of q whose text contains phrase.
func option(t *testing.T, q *quiz.Question, phrase string) quiz.Option {
	t.Helper()
	for _, o := range q.Options {
		if strings.Contains(o.Text, phrase) {
			return o
		}
	}
	t.Fatalf("question %s has no option containing %q", q.ID, phrase)
	return quiz.Option{}
}

// GitHub's lasting damage was writes the old primary had acknowledged and
// not yet replicated when a replica was promoted. A lease or a fence stops
// only new writes; only (semi-)synchronous replication to the promoted
// replica keeps those (../shared/reference/etcd-facts.md, "Other
// systems"). The key must not mark the lease or the fence as preventing
// the loss again.
func TestGitHubKeyNeedsSynchronousReplication(t *testing.T) {
	q := question(t, "l12-github-fixes")
	for phrase, want := range map[string]bool{
		"holds a lease":                             false,
		"Fence the old primary":                     false,
		"the replica that would be promoted has it": true,
		"Wait 60 s":                                 false,
	} {
		if o := option(t, q, phrase); o.Correct != want {
			t.Errorf("l12-github-fixes: the option %q is marked correct=%v, want %v", o.Text, o.Correct, want)
		}
	}
}

// etcd's client sends a 12 s lease's renewals 4.0 to 4.5 s apart (TTL/3,
// on a 500 ms send tick; embedetcd/facts TestKeepAliveSpacingOfTwelveSecondLease):
// the key must accept the whole range and nothing near TTL/2.
func TestKeepAliveIntervalKeyAcceptsTheMeasuredRange(t *testing.T) {
	q := question(t, "l04-etcd-keepalive-interval")
	for _, v := range []float64{4.0, 4.25, 4.5} {
		if lo, hi := q.Answer-q.Tolerance, q.Answer+q.Tolerance; v < lo-1e-9 || v > hi+1e-9 {
			t.Errorf("l04-etcd-keepalive-interval accepts %.2f to %.2f s; %.2f s is what etcd shows", lo, hi, v)
		}
	}
	if q.Answer+q.Tolerance >= 5 {
		t.Errorf("l04-etcd-keepalive-interval accepts up to %.2f s: too close to TTL/2 (6 s)", q.Answer+q.Tolerance)
	}
}
