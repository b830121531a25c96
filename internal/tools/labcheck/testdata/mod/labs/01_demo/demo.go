// Package demo is a fixture lab for labcheck's own tests.
package demo

import "example.com/m/labs"

// Add returns a+b.
func Add(a, b int) int {
	// TODO: return the sum.
	_ = labs.ErrNotImplemented
	return 0
}
