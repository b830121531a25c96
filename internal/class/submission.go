package class

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/sanitize"
)

// A pass on the board is a claim until the instructor has graded the same
// code with their own course: a learner's playground publishes the graded
// file with each pass (Submission, under the learner's prefix), and
// `class verify` writes its Verdict where only root can write.
const (
	// ClassKeys is the part of a learner's prefix the board follows: the
	// summary and the submissions.
	ClassKeys = "class/"
	// SubmissionPrefix holds one key per lab, under the learner's prefix.
	SubmissionPrefix = ClassKeys + "submissions/"
	// VerdictPrefix holds VerdictPrefix + learner + "/" + lab; learners'
	// roles reach only their own prefix, so they can read none of it and
	// write none of it.
	VerdictPrefix = "/playground-class/verdicts/"
	// MaxSourceBytes bounds a submitted file: a lab's file is a few
	// kilobytes; a larger one is not published (its pass stays a claim).
	MaxSourceBytes = 64 << 10
)

// Submission is the file a learner's pass was graded on.
type Submission struct {
	Lab    string    `json:"lab"`
	File   string    `json:"file"` // the stub's name, e.g. "cas.go"
	SHA256 string    `json:"sha256"`
	Source string    `json:"source"`
	Passed time.Time `json:"passed"`
	Rev    int64     `json:"-"` // the key's mod revision, as read
}

// NewSubmission records src as lab's graded file.
func NewSubmission(lab, file string, src []byte, passed time.Time) (Submission, error) {
	if len(src) > MaxSourceBytes {
		return Submission{}, fmt.Errorf("class: %s is %d bytes, more than the %d a submission may be", file, len(src), MaxSourceBytes)
	}
	sum := sha256.Sum256(src)
	return Submission{Lab: lab, File: file, SHA256: hex.EncodeToString(sum[:]), Source: string(src), Passed: passed}, nil
}

// ReadSource reads a lab file to submit or to regrade, refusing one over
// MaxSourceBytes without reading more than that of it.
func ReadSource(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxSourceBytes+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("class: %s is more than the %d bytes a lab file may be", path, MaxSourceBytes)
	}
	return src, nil
}

// Publish writes s through kv, which is under the learner's prefix.
func (s Submission) Publish(ctx context.Context, kv clientv3.KV) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("class: encode the submission of %s: %w", s.Lab, err)
	}
	if _, err := kv.Put(ctx, SubmissionPrefix+s.Lab, string(b)); err != nil {
		return fmt.Errorf("class: publish the submission of %s: %w", s.Lab, err)
	}
	return nil
}

// readSubmission decodes a submission key's value; the hash is checked
// against the source, so a hand-written key cannot claim another file.
func readSubmission(value []byte, rev int64) (Submission, error) {
	var s Submission
	if len(value) > MaxSourceBytes*2 {
		return s, fmt.Errorf("class: a submission of %d bytes, more than the %d a submission's record may be", len(value), MaxSourceBytes*2)
	}
	if err := json.Unmarshal(value, &s); err != nil {
		return s, fmt.Errorf("class: decode a submission: %w", err)
	}
	sum := sha256.Sum256([]byte(s.Source))
	// The names are printed, and cleaning could turn a crafted name
	// into a real lab's: one that needs cleaning is refused, shown
	// cleaned. The source is not printed (it is graded, and must hash
	// as it was written).
	if lab, file := sanitize.Line(s.Lab), sanitize.Line(s.File); lab != s.Lab || file != s.File {
		s.Lab, s.File = lab, file
		return s, fmt.Errorf("class: the submission of %s names its lab or file with control characters", lab)
	}
	if hex.EncodeToString(sum[:]) != s.SHA256 {
		return s, fmt.Errorf("class: the submission of %s does not match its hash", s.Lab)
	}
	s.Rev = rev
	return s, nil
}

// MaxSubmissions is how many submission keys of one learner are read: a
// course has a dozen labs, and a learner may write any number of keys
// under their prefix.
const MaxSubmissions = 64

// Submissions reads a learner's submissions, by lab, as root. The keys
// are listed first and each value read on its own, so a learner who
// wrote thousands of large values under submissions/ costs one value's
// memory at a time, and only the first MaxSubmissions are read.
func Submissions(ctx context.Context, root *clientv3.Client, learner string) (map[string]Submission, []error, error) {
	from := Prefix(learner) + SubmissionPrefix
	keys, err := root.Get(ctx, from, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(MaxSubmissions+1))
	if err != nil {
		return nil, nil, fmt.Errorf("class: read %s's submissions: %w", learner, err)
	}
	out := map[string]Submission{}
	var bad []error
	if keys.More || len(keys.Kvs) > MaxSubmissions {
		bad = append(bad, fmt.Errorf("%s: more than %d submissions; only the first %d are read", learner, MaxSubmissions, MaxSubmissions))
		keys.Kvs = keys.Kvs[:min(len(keys.Kvs), MaxSubmissions)]
	}
	for _, k := range keys.Kvs {
		raw := strings.TrimPrefix(string(k.Key), from)
		lab := sanitize.Line(raw)
		if lab != raw {
			bad = append(bad, fmt.Errorf("%s/%s: a submission key with control characters in its name", learner, lab))
			continue
		}
		r, err := root.Get(ctx, string(k.Key))
		if err != nil {
			return nil, nil, fmt.Errorf("class: read %s's submission of %s: %w", learner, lab, err)
		}
		if len(r.Kvs) == 0 {
			continue // removed since the listing
		}
		s, err := readSubmission(r.Kvs[0].Value, r.Kvs[0].ModRevision)
		if err != nil || s.Lab != lab {
			bad = append(bad, fmt.Errorf("%s/%s: %v", learner, lab, err))
			continue
		}
		out[lab] = s
	}
	return out, bad, nil
}

// Verdict is the instructor's regrade of one submission.
type Verdict struct {
	Rev      int64     `json:"rev"` // the submission key's mod revision it judged
	SHA256   string    `json:"sha256"`
	Verified bool      `json:"verified"`
	Reason   string    `json:"reason,omitempty"` // why it was refused
	At       time.Time `json:"at"`
}

func verdictKey(learner, lab string) string { return VerdictPrefix + learner + "/" + lab }

// WriteVerdict records v for learner's lab, as root.
func WriteVerdict(ctx context.Context, root *clientv3.Client, learner, lab string, v Verdict) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := root.Put(ctx, verdictKey(learner, lab), string(b)); err != nil {
		return fmt.Errorf("class: record the verdict on %s/%s: %w", learner, lab, err)
	}
	return nil
}

// Verdicts reads every verdict, by learner and lab, as root.
func Verdicts(ctx context.Context, root *clientv3.Client) (map[string]map[string]Verdict, int64, error) {
	r, err := root.Get(ctx, VerdictPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("class: read the verdicts: %w", err)
	}
	out := map[string]map[string]Verdict{}
	for _, kv := range r.Kvs {
		addVerdict(out, kv.Key, kv.Value)
	}
	return out, r.Header.Revision, nil
}

// addVerdict decodes one verdict key into m; a key it cannot read is
// skipped (only root writes there).
func addVerdict(m map[string]map[string]Verdict, key, value []byte) {
	learner, lab, ok := strings.Cut(strings.TrimPrefix(string(key), VerdictPrefix), "/")
	var v Verdict
	if !ok || json.Unmarshal(value, &v) != nil {
		return
	}
	// Root wrote it, but its reason quotes the learner's test output.
	sanitize.Strings(&v)
	if m[learner] == nil {
		m[learner] = map[string]Verdict{}
	}
	m[learner][lab] = v
}
