//go:build race

package cas

// expiredRounds is how many times TestStep5's readers meet on expired
// keys. Under -race a few rounds are plenty: the race detector reports
// two unordered map accesses whether or not they happened to overlap.
const expiredRounds = 10
