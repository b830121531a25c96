package class_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/class"
)

// A learner may write any number of keys under submissions/: class
// verify reads the first MaxSubmissions of them, one value at a time,
// and says it left the rest.
func TestSubmissionsAreReadUnderALimit(t *testing.T) {
	c := startClass(t, 1)
	root := rootClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ada, err := learnerSettings(c, actions[0]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ada.Close()
	for i := range class.MaxSubmissions + 6 {
		if _, err := ada.Put(ctx, class.Prefix("ada")+class.SubmissionPrefix+fmt.Sprintf("lab%03d", i), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	subs, bad, err := class.Submissions(ctx, root, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 0 || len(bad) != class.MaxSubmissions+1 || !strings.Contains(bad[0].Error(), "more than 64 submissions") {
		t.Fatalf("read %d submissions, %d complaints (first %v); want none readable, one complaint per key read and one for the rest", len(subs), len(bad), bad[0])
	}
}

// ReadSource refuses a file over MaxSourceBytes, and takes one at it.
func TestReadSourceHasALimit(t *testing.T) {
	dir := t.TempDir()
	ok, big := filepath.Join(dir, "ok.go"), filepath.Join(dir, "big.go")
	os.WriteFile(ok, make([]byte, class.MaxSourceBytes), 0o600)
	os.WriteFile(big, make([]byte, class.MaxSourceBytes+1), 0o600)
	if src, err := class.ReadSource(ok); err != nil || len(src) != class.MaxSourceBytes {
		t.Errorf("ReadSource of a file at the limit: %d bytes, %v", len(src), err)
	}
	if _, err := class.ReadSource(big); err == nil || !strings.Contains(err.Error(), "65536 bytes") {
		t.Errorf("ReadSource of a file over the limit: %v, want a refusal naming the limit", err)
	}
}
