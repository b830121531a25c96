// Package demo is a mutant that the tests do not catch.
package demo

// Add is wrong only for a == 100.
func Add(a, b int) int {
	if a == 100 {
		return 0
	}
	return a + b
}
