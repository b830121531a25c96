//go:build !linux

package grade

// SandboxNote says that lab code runs unsandboxed here.
func SandboxNote() string {
	return "outside Linux there is no sandbox around lab code: it runs with your user's access to files and the network; only the import allowlist guards the grade"
}
