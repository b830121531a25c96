package labstub

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// SumsFile is the manifest of the stubs as the course ships them,
// relative to the module root: one line per lab, "<git blob hash>
// labs/<id>/<file>", for the file each lab.yaml names; # starts a
// comment. labcheck -write-stubs writes it.
const SumsFile = "labs/stubs.sum"

// Sum is one line of SumsFile.
type Sum struct {
	Hash string // git's blob hash of the stub as shipped
	Path string // labs/<id>/<file>, slash-separated
}

var sumLine = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})  (labs/\d\d_[a-z0-9_]+/[^/\s]+\.go)$`)

// ReadSums parses root's SumsFile; (nil, nil) when there is none.
func ReadSums(root string) ([]Sum, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(SumsFile)))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", SumsFile, err)
	}
	var out []Sum
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sumLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: want \"<git blob hash>  labs/NN_slug/file.go\", got %q", SumsFile, n, line)
		}
		out = append(out, Sum{Hash: m[1], Path: m[2]})
	}
	return out, nil
}

// BlobHash is git's object id of a file holding data (SHA-1
// repositories), which SumsFile records.
func BlobHash(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Untouched reports whether the file rel (labs/<id>/<file>,
// slash-separated) in the checkout at root is still the stub the course
// ships, as SumsFile records it: the learner has not written it yet.
func Untouched(root, rel string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return false, err
	}
	sums, err := ReadSums(root)
	if err != nil {
		return false, err
	}
	if sums == nil {
		return false, fmt.Errorf("no %s", SumsFile)
	}
	return Matches(sums, rel, data), nil
}

// Matches reports whether sums record data as the shipped copy of rel.
func Matches(sums []Sum, rel string, data []byte) bool {
	hash := BlobHash(data)
	for _, s := range sums {
		if s.Path == rel && s.Hash == hash {
			return true
		}
	}
	return false
}
