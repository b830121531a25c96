package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ownership-election/playground/internal/atomicfile"
)

// fileFormat is a settings file as `playground class setup` writes it: all
// a learner needs in one file, the CA certificate inline, so it works
// wherever the learner saves it.
type fileFormat struct {
	Endpoints []string `json:"endpoints"`
	User      string   `json:"user,omitempty"`
	Password  string   `json:"password,omitempty"`
	CACert    string   `json:"cacert_pem,omitempty"`
	Cert      string   `json:"cert,omitempty"` // file names, relative to the settings file
	Key       string   `json:"key,omitempty"`
}

// LoadFile reads a settings file (JSON, as WriteFile writes it). Relative
// certificate file names are taken from the file's folder.
func LoadFile(path string) (Settings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
	var f fileFormat
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Settings{}, fmt.Errorf("settings file %s: %w", path, err)
	}
	if len(f.Endpoints) == 0 {
		return Settings{}, fmt.Errorf("settings file %s: no endpoints", path)
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(filepath.Dir(path), p)
	}
	s := Settings{Endpoints: f.Endpoints, User: f.User, Password: f.Password,
		Cert: rel(f.Cert), Key: rel(f.Key), File: path}
	if f.CACert != "" {
		s.CACertPEM = []byte(f.CACert)
	}
	return s, nil
}

// WriteFile writes s as a settings file readable by its owner only (it
// holds a password). The CA certificate goes inline.
func (s Settings) WriteFile(path string) error {
	f := fileFormat{Endpoints: s.Endpoints, User: s.User, Password: s.Password, Cert: s.Cert, Key: s.Key}
	switch {
	case len(s.CACertPEM) > 0:
		f.CACert = string(s.CACertPEM)
	case s.CACert != "":
		pem, err := os.ReadFile(s.CACert)
		if err != nil {
			return fmt.Errorf("write settings: %w", err)
		}
		f.CACert = string(pem)
	}
	if len(f.Endpoints) == 0 {
		return errors.New("write settings: no endpoints")
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	// Written anew, not over the old file, so it is 0600 whatever mode
	// an earlier copy had: it holds a password.
	return atomicfile.Write(path, append(b, '\n'), 0o600)
}

// EnvFile is s as lines of `export NAME=value` for a shell to source; the
// CA certificate is named by caFile (written next to it by the caller).
func (s Settings) EnvFile(caFile string) string {
	var b strings.Builder
	q := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	fmt.Fprintf(&b, "export %s=%s\n", EnvEndpoints, q(strings.Join(s.Endpoints, ",")))
	if caFile != "" {
		fmt.Fprintf(&b, "export %s=%s\n", EnvCACert, q(caFile))
	}
	if s.User != "" {
		fmt.Fprintf(&b, "export %s=%s\n", EnvUser, q(s.User))
	}
	if s.Password != "" {
		fmt.Fprintf(&b, "export %s=%s\n", EnvPassword, q(s.Password))
	}
	return b.String()
}
