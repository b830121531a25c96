package lab

import (
	"testing"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
)

// TestLabStatusProgress: every way a grade ends records as the progress
// file says it, a pass only once verified, a cancelled grade not at all.
func TestLabStatusProgress(t *testing.T) {
	for s, want := range map[grade.LabStatus]progress.LabStatus{
		grade.LabPassed:     progress.LabStatusPassed,
		grade.LabUnverified: progress.LabStatusFailing,
		grade.LabFailed:     progress.LabStatusFailing,
		grade.LabRacy:       progress.LabStatusRacy,
		grade.LabFlaky:      progress.LabStatusFlaky,
		grade.LabError:      progress.LabStatusError,
	} {
		if got, ok := progressStatus(s); !ok || got != want {
			t.Errorf("progressStatus(%s) = %q, %v; want %q", s, got, ok, want)
		}
	}
	if got, ok := progressStatus(grade.LabCanceled); ok {
		t.Errorf("a cancelled grade records %q", got)
	}
}
