package lab

import (
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
)

// progressStatus is how the learner's progress records a grade that
// ended in s, the one mapping between the two vocabularies; ok is false
// for a grade that records nothing (a cancelled one). A pass still
// waiting for its verification records as failing: only a verified pass
// counts. It lives here, where a grade's end is recorded, because
// grading and progress are peers that do not import each other (.layers).
func progressStatus(s grade.LabStatus) (st progress.LabStatus, ok bool) {
	switch s {
	case grade.LabPassed:
		return progress.LabStatusPassed, true
	case grade.LabRacy:
		return progress.LabStatusRacy, true
	case grade.LabFlaky:
		return progress.LabStatusFlaky, true
	case grade.LabError:
		return progress.LabStatusError, true
	case grade.LabFailed, grade.LabUnverified:
		return progress.LabStatusFailing, true
	}
	return "", false
}
