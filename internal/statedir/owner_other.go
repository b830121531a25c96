//go:build !unix

package statedir

import "os"

// ownerOf: Windows and the rest keep ownership in ACLs, not in a user id
// the standard library exposes, so nothing is checked there.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

// ownersApply says permission bits mean what they say here: on Windows
// they are synthesised from the read-only attribute.
func ownersApply() bool { return false }
