// Style: a "variant" that is in fact wrong for negative numbers, which labcheck must reject.
package demo

// Add returns a+b.
func Add(a, b int) int {
	if b < 0 {
		return a
	}
	return a + b
}
