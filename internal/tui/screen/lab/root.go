package lab

import (
	"github.com/ownership-election/playground/internal/grade"
)

// ModulePath is the course's Go module; a folder whose go.mod declares it
// is a checkout where the labs can be edited and graded.
const ModulePath = grade.ModulePath

// FindRoot looks for the checkout that holds the labs, from dir up to the
// file system's root, and returns "" when dir is not inside one (for
// example an installed binary run from the home folder). Pass the result
// as Options.Root and to Prewarm.
func FindRoot(dir string) string { return grade.FindRoot(dir) }
