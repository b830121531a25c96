package grade

import (
	"testing"

	"github.com/ownership-election/playground/internal/progress"
)

// TestLabStatusProgress: every way a grade ends records as the progress
// file says it, a pass only once verified, a cancelled grade not at all.
func TestLabStatusProgress(t *testing.T) {
	for s, want := range map[LabStatus]progress.LabStatus{
		LabPassed:     progress.LabStatusPassed,
		LabUnverified: progress.LabStatusFailing,
		LabFailed:     progress.LabStatusFailing,
		LabRacy:       progress.LabStatusRacy,
		LabFlaky:      progress.LabStatusFlaky,
		LabError:      progress.LabStatusError,
	} {
		if got, ok := s.Progress(); !ok || got != want {
			t.Errorf("%s.Progress() = %q, %v; want %q", s, got, ok, want)
		}
	}
	if got, ok := LabCanceled.Progress(); ok {
		t.Errorf("a cancelled grade records %q", got)
	}
}
