// Package demo is a two-step fixture lab for the lab runner's tests: the
// first step is already solved, the second is not.
package demo

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Double returns twice n.
func Double(n int) int {
	// TODO: return twice n.
	return n
}
