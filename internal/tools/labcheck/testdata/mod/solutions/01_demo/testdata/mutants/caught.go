// Package demo is a mutant that the tests catch.
package demo

// Add subtracts instead.
func Add(a, b int) int { return a - b }
