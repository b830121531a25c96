package labrun

import "github.com/ownership-election/playground/internal/history"

// lab05OpLocked is the Facts.Op of a lock05 replica's note that the
// lab's Acquire returned ErrLocked, with the revision of etcd's last
// answer to its requests (0 when none came).
const lab05OpLocked = "locked"

// lab05LockedMeansHeld: Acquire said ErrLocked only on an answer of
// etcd's at whose revision the lock key existed. ErrLocked tells the
// caller to wait for a holder to go away; said of a request that failed
// (no answer), or of a lock etcd held for nobody, it sends the caller to
// wait for a release that is not coming, or hides from it that its own
// write may have landed (a lost answer) so it never drops that lease.
func lab05LockedMeansHeld(f *history.Findings) history.Finding {
	log := newKeyLog(f.Events)
	for _, e := range f.Events {
		if e.Kind != history.Note || e.Facts == nil || e.Facts.Op != lab05OpLocked {
			continue
		}
		rev := e.Facts.Revision
		if rev == 0 {
			return breaks("locked-unasked", e.At, []string{e.Replica}, []history.Event{e},
				"%s's Acquire returned ErrLocked, but etcd had answered none of its requests: a failure was reported as someone else holding the lock.", e.Replica)
		}
		if _, held := log.asOf(lab05Key, rev); !held && log.reached(rev) {
			return breaks("locked-but-free", e.At, []string{e.Replica}, []history.Event{e},
				"%s's Acquire returned ErrLocked, but at revision %d, etcd's answer, no lock key existed.", e.Replica, rev)
		}
	}
	return holds("Acquire said ErrLocked only when etcd's answer showed the lock held.")
}
