package labs

import (
	"embed"
	"io/fs"
)

// catalog holds what the playground needs to know about the labs when it
// runs outside a checkout: each lab's manifest, README, stub and grader
// tests (the tests' names are validated against the manifest's steps).
//
//go:embed [0-9][0-9]_*/lab.yaml [0-9][0-9]_*/README.md [0-9][0-9]_*/*.go
var catalog embed.FS

// Catalog returns the labs as a file system with one folder per lab id:
// <id>/lab.yaml, <id>/README.md, <id>/<stub>.go and <id>/*_test.go.
// Folders without a lab.yaml (none today) are not labs.
func Catalog() fs.FS {
	return catalog
}
