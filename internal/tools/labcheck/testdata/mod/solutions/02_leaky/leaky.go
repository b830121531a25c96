// Package leaky is a fixture lab whose stub already passes a step.
package leaky

// Add returns a+b (the stub forgot to leave it unwritten).
func Add(a, b int) int { return a + b }
