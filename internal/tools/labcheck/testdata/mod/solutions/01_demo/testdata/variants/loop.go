// Style: adds one at a time in a loop (a correct variant).
package demo

// Add returns a+b.
func Add(a, b int) int {
	sum := a
	for ; b > 0; b-- {
		sum++
	}
	for ; b < 0; b++ {
		sum--
	}
	return sum
}
