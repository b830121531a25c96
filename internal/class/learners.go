// Package class runs a class on one shared etcd cluster: an etcd user and
// role per learner that covers only that learner's prefix, a small progress
// summary each learner publishes under it, and a live board of every
// learner's summary for the instructor.
package class

import (
	"bufio"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Learner is one line of the learners file: a name and, optionally, the
// password the instructor chose (otherwise Setup generates one).
type Learner struct {
	Name     string
	Password string
}

// validName keeps learner names usable as etcd user names, key prefixes
// and file names alike.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// reserved names cannot be learners: etcd's root user, and names that
// would collide with the class's own keys.
var reserved = map[string]bool{"root": true}

// ParseLearners reads a learners file: one learner a line, "NAME" or
// "NAME PASSWORD"; blank lines and lines starting with # are skipped.
// Names are lower-case letters, digits, dot, dash and underscore. Errors
// name the line.
func ParseLearners(r io.Reader, file string) ([]Learner, error) {
	var out []Learner
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) > 2 {
			return nil, fmt.Errorf("%s:%d: want NAME or NAME PASSWORD, got %d fields", file, line, len(fields))
		}
		l := Learner{Name: fields[0]}
		if len(fields) == 2 {
			l.Password = fields[1]
		}
		if !validName.MatchString(l.Name) {
			return nil, fmt.Errorf("%s:%d: learner name %q: use lower-case letters, digits, '.', '-' and '_' (at most 63)", file, line, l.Name)
		}
		if reserved[l.Name] {
			return nil, fmt.Errorf("%s:%d: %q is reserved for etcd's administrator", file, line, l.Name)
		}
		if first, dup := seen[l.Name]; dup {
			return nil, fmt.Errorf("%s:%d: learner %q already listed on line %d", file, line, l.Name, first)
		}
		seen[l.Name] = line
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no learners in the file", file)
	}
	return out, nil
}

// GeneratePassword returns a random password of 16 characters that is
// easy to read out and type (base32, no padding).
func GeneratePassword() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("class: random password: %v", err)) // crypto/rand does not fail on supported platforms
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}
