// Package demo is the reference solution of the fixture lab.
package demo

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Double returns twice n.
func Double(n int) int { return 2 * n }
