package grade

import "github.com/ownership-election/playground/internal/progress"

// Progress is how the learner's progress records a grade that ended in
// s, the one mapping between the two vocabularies; ok is false for a
// grade that records nothing (a cancelled one). A pass still waiting
// for its verification records as failing: only a verified pass counts.
func (s LabStatus) Progress() (st progress.LabStatus, ok bool) {
	switch s {
	case LabPassed:
		return progress.LabStatusPassed, true
	case LabRacy:
		return progress.LabStatusRacy, true
	case LabFlaky:
		return progress.LabStatusFlaky, true
	case LabError:
		return progress.LabStatusError, true
	case LabFailed, LabUnverified:
		return progress.LabStatusFailing, true
	}
	return "", false
}
