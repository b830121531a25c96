// Package labs holds the learner's exercises, one folder per lab, and the
// sentinel that every unwritten function returns.
package labs

import "errors"

// ErrNotImplemented is returned (or panicked with) by every function body
// the learner still has to write.
var ErrNotImplemented = errors.New("labs: not implemented yet (this is your part)")
