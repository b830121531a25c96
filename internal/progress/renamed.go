package progress

import (
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/review"
)

// renameExperiments files what was saved under the name a scenario went
// by before it was renamed (internal/experiment/aliases) under its
// current name: its runs and prediction, and its prediction's review
// card. A record under both names (two builds on one state directory)
// is merged as two files' records are.
func (p *Progress) renameExperiments() {
	for old, now := range history.OldNames() {
		if e, ok := p.Experiments[old]; ok {
			delete(p.Experiments, old)
			p.mergeExperiments(&Progress{Experiments: map[string]ExperimentRecord{now: e}})
		}
		oldID, nowID := PredictReviewID(old), PredictReviewID(now)
		if c, ok := p.Review[oldID]; ok {
			delete(p.Review, oldID)
			if cur, ok := p.Review[nowID]; !ok || review.Newer(c, cur) {
				p.Review[nowID] = c
			}
		}
	}
}
