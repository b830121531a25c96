package demo

import "testing"

func TestStep1_Adds(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestStep2_Negative(t *testing.T) {
	t.Run("both negative", func(t *testing.T) {
		if got := Add(-1, -1); got != -2 {
			t.Fatalf("Add(-1, -1) = %d, want -2", got)
		}
	})
}
