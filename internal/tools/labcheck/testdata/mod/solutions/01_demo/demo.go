// Package demo is a fixture lab for labcheck's own tests.
package demo

// Add returns a+b.
func Add(a, b int) int { return a + b }
