package progress

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// savedBeforeRenames is progress as a build before the renames wrote it:
// thundering-herd under its old name and already under its new one (a
// newer build ran it once on the same state directory), and
// leader-change-extends-leases only under its old name, with the
// prediction's review cards under the old names.
const savedBeforeRenames = `{
  "version": 1,
  "updated": "2026-11-30T10:00:00Z",
  "experiments": {
    "thundering-herd": {"runs": 3, "shown": true, "last_run": "2026-11-29T10:00:00Z", "predicted": "wrong", "predicted_at": "2026-11-29T09:00:00Z", "outcome": ["About one per waiter"]},
    "lock-waiters": {"runs": 1, "shown": false, "last_run": "2026-11-30T10:00:00Z"},
    "leader-change-extends-leases": {"runs": 1, "shown": true, "predicted": "right", "predicted_at": "2026-11-28T09:00:00Z"}
  },
  "review": {
    "experiment/thundering-herd/predict": {"box": 1, "due": "2026-12-01T09:00:00Z", "seen": "2026-11-29T09:00:00Z"},
    "experiment/leader-change-extends-leases/predict": {"box": 0, "due": "2026-11-29T09:00:00Z", "seen": "2026-11-28T09:00:00Z"}
  }
}
`

// TestLoadFilesOldExperimentNamesUnderTheirNewOnes: progress saved under
// a scenario's old name loads under its current name, merged with what
// was saved under the new one, review cards included, and is written
// back that way.
func TestLoadFilesOldExperimentNamesUnderTheirNewOnes(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte(savedBeforeRenames), 0o600); err != nil {
		t.Fatal(err)
	}
	p, notice := Load(path, time.Now())
	if notice != nil {
		t.Fatal(notice)
	}
	for _, old := range []string{"thundering-herd", "leader-change-extends-leases"} {
		if _, ok := p.Experiments[old]; ok {
			t.Errorf("%s still has a record under its old name", old)
		}
		if _, ok := p.Review[PredictReviewID(old)]; ok {
			t.Errorf("%s's review card is still under its old name", old)
		}
	}
	w := p.Experiments["lock-waiters"]
	if w.Runs != 3 || !w.Shown || w.Predicted != "wrong" || !w.LastRun.Equal(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("lock-waiters merged as %+v: want 3 runs, shown, predicted wrong, last run on the 30th", w)
	}
	if l := p.Experiments["leader-change"]; l.Runs != 1 || l.Predicted != "right" {
		t.Errorf("leader-change read as %+v", l)
	}
	if c, ok := p.Review[PredictReviewID("lock-waiters")]; !ok || c.Box != 1 {
		t.Errorf("lock-waiters' review card: %+v, %v", c, ok)
	}
	due := p.DueForReview(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	names := map[string]bool{}
	for _, id := range due {
		name, _ := PredictReviewExperiment(id)
		names[name] = true
	}
	if !names["lock-waiters"] || !names["leader-change"] || len(names) != 2 {
		t.Errorf("due for review: %v, want the two predictions under their new names", due)
	}
	if _, err := Update(path, func(*Progress) {}); err != nil {
		t.Fatal(err)
	}
	if back, _ := Load(path, time.Now()); back.Experiments["lock-waiters"].Runs != 3 || len(back.Experiments) != 2 {
		t.Errorf("written back as %+v", back.Experiments)
	}
}
