// Package labs is the fixture's copy of the sentinel stubs return.
package labs

import "errors"

// ErrNotImplemented is what an unwritten body returns.
var ErrNotImplemented = errors.New("not implemented")
