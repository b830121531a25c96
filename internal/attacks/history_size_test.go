package attacks

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ownership-election/playground/internal/history"
)

// TestAttackReplayAHugeHistory: a history file of 600 MiB (the issue's
// was 535 MiB and cost 76 s and 3.5 GB to replay). A safe system refuses
// it from its size, before decoding a byte, and says the limit; an unsafe
// one reads it all. (Time and memory are measured apart: see the report
// of issue 34; a test asserts no durations.)
func TestAttackReplayAHugeHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 600 MiB that cost the disk nothing.
	if _, err := f.WriteString(`{"format":1,"scenario":"ttl-unlock-bug","events":[`); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(600 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, _, errOut := runPlayground("experiment", "replay", path)
	if code == 0 || !strings.Contains(errOut, "600 MiB, more than the 64 MiB a history may be") {
		t.Fatalf("replay of a 600 MiB file: exit %d, stderr %q; want a refusal naming its size and the limit", code, errOut)
	}
}

// TestAttackReplayAnEndlessStream: the same through a pipe, whose size
// nobody knows in advance. A safe system stops reading at the limit and
// says so; an unsafe one reads until memory runs out.
func TestAttackReplayAnEndlessStream(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var written atomic.Int64
	go func() {
		defer w.Close()
		io.WriteString(w, `{"format":1,"scenario":"ttl-unlock-bug","events":[`)
		event := strings.Repeat(`{"t":1,"kind":"note","text":"`+strings.Repeat("x", 900)+`"},`, 64)
		for {
			n, err := io.WriteString(w, event)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	code, _, errOut := runPlayground("experiment", "replay", fmt.Sprintf("/proc/self/fd/%d", r.Fd()))
	r.Close() // the writer stops at its next write
	if code == 0 || !strings.Contains(errOut, "more than the 64 MiB a history may be") {
		t.Fatalf("replay of an endless stream: exit %d, stderr %q; want a refusal naming the limit", code, errOut)
	}
	if n := written.Load(); n > history.MaxFileBytes+(1<<20) {
		t.Errorf("the replay took %d MiB of the stream, past the %d MiB limit", n>>20, history.MaxFileBytes>>20)
	}
}
