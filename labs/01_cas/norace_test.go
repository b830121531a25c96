//go:build !race

package cas

// expiredRounds is how many times TestStep5's readers meet on expired
// keys. Without -race only the runtime's own map check can see a Get
// that writes under a read lock, and it sees it only when two accesses
// really overlap: enough rounds make that near certain even on a busy
// two-core machine (and take about half a second).
const expiredRounds = 300
