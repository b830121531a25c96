package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ownership-election/playground/internal/atomicfile"
	"github.com/ownership-election/playground/internal/statedir"
)

// DefaultPath is the progress file in the playground's state directory.
func DefaultPath() (string, error) {
	dir, err := statedir.Dir()
	if err != nil {
		return "", fmt.Errorf("locate progress file: %w", err)
	}
	return filepath.Join(dir, FileName), nil
}

// Notice explains why saved progress could not be used as it was. Load
// returns it alongside fresh progress; the UI shows it and goes on.
type Notice struct {
	Path    string // the progress file
	MovedTo string // where the bad file was moved; empty if it could not be moved
	Err     error  // what was wrong with it
}

func (n *Notice) Error() string { return n.String() }

// String is the sentence shown to the learner.
func (n *Notice) String() string {
	if n.MovedTo != "" {
		return fmt.Sprintf("saved progress could not be read (%v); it was moved to %s and a fresh record started", n.Err, n.MovedTo)
	}
	return fmt.Sprintf("saved progress in %s could not be read (%v); starting a fresh record for this run", n.Path, n.Err)
}

// Load reads progress from path. A missing file is no error: it returns
// empty progress. A file that cannot be read or parsed is moved aside to
// path.corrupt-<time> and empty progress is returned with a Notice saying
// so; Load never fails the program because of the learner's file.
func Load(path string, now time.Time) (*Progress, *Notice) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err == nil {
		var p *Progress
		if p, err = decode(data); err == nil {
			return p, nil
		}
	}
	n := &Notice{Path: path, Err: err}
	aside := fmt.Sprintf("%s.corrupt-%s", path, now.UTC().Format("20060102T150405Z"))
	if rerr := os.Rename(path, aside); rerr == nil {
		n.MovedTo = aside
	}
	return New(), n
}

func decode(data []byte) (*Progress, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("file is empty")
	}
	p := New()
	p.PageNumbering = 0 // a file that does not say is in the first numbering
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("parse progress: %w", err)
	}
	if p.Version > formatVersion {
		return nil, fmt.Errorf("progress format %d is newer than this program understands (%d)", p.Version, formatVersion)
	}
	if p.Lessons == nil {
		p.Lessons = map[string]*Lesson{}
	}
	for id, l := range p.Lessons {
		if l == nil {
			delete(p.Lessons, id)
		}
	}
	p.Version = formatVersion
	p.sanitize()
	p.renameExperiments()
	p.renumberPages()
	p.moveSplitLessons()
	return p, nil
}

// write replaces path with p atomically: the JSON goes to a temporary file
// in the same directory, is synced, and is renamed over path, so a reader
// sees either the old file or the new one, never a mix. Callers hold the
// lock (see Update).
func write(path string, p *Progress) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("save progress: encode: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("save progress: %w", err)
	}
	return nil
}
