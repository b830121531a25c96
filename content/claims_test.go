package content

import (
	"io/fs"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The claims of the course that etcd cannot show by running (arithmetic
// the lessons do, what a library's docs say, what a lab's solution does)
// are pinned here; what etcd can show is pinned by embedetcd/facts.

func lesson(t *testing.T, dir string) string {
	t.Helper()
	b, err := fs.ReadFile(FS(), "lessons/"+dir+"/lesson.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// squash joins a lesson's lines so a phrase is found across line breaks.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// Lesson 6's minimum-TTL table: every row's ElectionTicks, computation and
// minimum follow from its TickMs / ElectionMs by etcd's formula
// ceil(floor(3 × ElectionTicks / 2) × TickMs), in whole seconds.
func TestMinimumTTLTableFollowsTheFormula(t *testing.T) {
	row := regexp.MustCompile(`(?m)^\| (\d+) / (\d+) [^|]*\| (\d+) +\| (\d+) × (\d+) ms = [0-9.]+ s +\| (\d+) s +\|$`)
	rows := row.FindAllStringSubmatch(lesson(t, "06-tuning-the-ttl"), -1)
	if len(rows) != 4 {
		t.Fatalf("found %d rows of the minimum-TTL table in lesson 6, want 4 (default, playground, cluster, fast)", len(rows))
	}
	for _, r := range rows {
		n := func(i int) int { v, _ := strconv.Atoi(r[i]); return v }
		tick, election := n(1), n(2)
		ticks := election / tick
		floor := 3 * ticks / 2
		min := int(math.Ceil(float64(floor*tick) / 1000))
		if n(3) != ticks || n(4) != floor || n(5) != tick || n(6) != min {
			t.Errorf("row %q: ElectionTicks %d, %d × %d ms, minimum %d s by the formula", r[0], ticks, floor, tick, min)
		}
	}
}

// Lesson 6, "Putting it together": with 9 s pauses on etcd's client
// (P ≤ 2T/3 − 0.5 s) and a 30 s failover budget that must survive one etcd
// leader change (TTL + 1 s election timeout + TTL + 0.5 s revoke loop),
// no whole-second TTL meets both; the lesson must say so, and name 15 s.
func TestCompactionBudgetsHaveNoCommonTTL(t *testing.T) {
	fits := func(ttl float64) bool { return 2*ttl/3-0.5 >= 9 && 2*ttl+1+0.5 <= 30 }
	smallest := 0
	for ttl := 1; ttl <= 60; ttl++ {
		if fits(float64(ttl)) {
			t.Fatalf("TTL %d s meets both budgets; the lesson says none does", ttl)
		}
		if smallest == 0 && 2*float64(ttl)/3-0.5 >= 9 {
			smallest = ttl
		}
	}
	text := squash(lesson(t, "06-tuning-the-ttl"))
	if smallest != 15 || !strings.Contains(text, "No TTL meets both budgets") || !strings.Contains(text, "take **TTL 15 s**") {
		t.Errorf("lesson 6's compaction example must pick TTL 15 s (the smallest for the pauses: %d s) and say no TTL meets both budgets", smallest)
	}
}

// Lesson 8: client-go followers poll every RetryPeriod (2 s) with up to
// 120 % jitter, and the delay counts twice (seeing the last renewal, then
// trying after the lease ran out): 15 + 2 × 4.4 ≈ 24 s at worst.
func TestClientGoWorstCaseFailover(t *testing.T) {
	worst := 15 + 2*(2*2.2)
	text := squash(lesson(t, "08-other-coordinators"))
	if math.Round(worst) != 24 || !strings.Contains(text, "between 15 s and about 24 s after its last renewal") {
		t.Errorf("lesson 8 must give client-go's failover as 15 s to about %.0f s after the last renewal", worst)
	}
}

// Lesson 2's billing scheduler renews a 15 s lease every 5 s, so the
// ownerless gap after a crash is 10 to 15 s, counted from the last renewal.
func TestBillingGapRange(t *testing.T) {
	const ttl, renew = 15, 5
	text := squash(lesson(t, "02-consensus-and-cas"))
	want := strconv.Itoa(ttl-renew) + " to " + strconv.Itoa(ttl) + " s"
	if !strings.Contains(text, "the ownerless gap is "+want) {
		t.Errorf("lesson 2 must say the gap is %s", want)
	}
}

// Lesson 3's watchdog and lab 03's solution agree: count from when the
// request was sent, and stop at three quarters of the TTL.
func TestWatchdogMatchesLab03(t *testing.T) {
	text := lesson(t, "03-locks-and-the-ttl-bug")
	if !strings.Contains(text, "deadline := sent.Add(ttl * 3 / 4)") {
		t.Error("lesson 3's watchdog must count 3/4 of the TTL from the send time")
	}
	sol, err := os.ReadFile("../solutions/03_lease/lease.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sol), "l.lockTime.Add(l.ttl*3/4)") {
		t.Error("lab 03's MayAct no longer stops at 3/4 of the TTL from lockTime: lesson 3's watchdog says it does")
	}
}

// Claims found wrong in review must not come back.
func TestCorrectedClaimsStayCorrected(t *testing.T) {
	for _, c := range []struct{ dir, phrase, why string }{
		{"05-fencing-tokens", "in no particular order", "lease ids grow per member"},
		{"07-etcd-election-recipe", "lease IDs are unique but not ordered", "lease ids grow per member"},
		{"02-consensus-and-cas", "An expired lease cannot be renewed.", "until it is revoked it can (quorum loss)"},
		{"04-renewable-leases", "**an expired lease cannot be renewed**", "until it is revoked it can (quorum loss)"},
		{"10-failure-modes-and-security", "An expired etcd lease cannot be renewed", "a lease expired during a quorum loss is revived"},
		{"08-other-coordinators", "pause side effects", "Curator's default is to give up leadership"},
		{"08-other-coordinators", "replaced 15 to 20 s after", "the worst case is about 24 s"},
		{"08-other-coordinators", "that only ever grows", "the sequence counter is a signed 32-bit int and overflows"},
		{"03-locks-and-the-ttl-bug", "if time.Since(start) >= ttl", "the watchdog counts from the send and stops at 3/4"},
		{"04-renewable-leases", "running after the TTL since the last successful renewal", "the watchdog counts from the send and stops at 3/4"},
		{"06-tuning-the-ttl", "cannot by itself outlast a lease that its client is renewing correctly", "the client's deadline (last reply + TTL) can pass during a long election"},
		{"06-tuning-the-ttl", "unless the (alpha) lease-checkpoint feature gates are switched on", "checkpoints matter only for leases with over 5 minutes left"},
		{"04-renewable-leases", "every 4 s for a 12-second TTL", "the 500 ms send tick makes it 4.0 to 4.5 s"},
		{"11-timing-and-system-models", "chrony can be told to slew faster", "chrony's default maxslewrate is 83,333 ppm"},
	} {
		if strings.Contains(squash(lesson(t, c.dir)), squash(c.phrase)) {
			t.Errorf("lesson %s says %q again; it was corrected: %s", c.dir, c.phrase, c.why)
		}
	}
}

// Quiz keys and explanations found wrong in review must not come back.
func TestCorrectedKeysStayCorrected(t *testing.T) {
	for _, c := range []struct{ dir, phrase, why string }{
		{"03-locks-and-the-ttl-bug", "An expired lease cannot be renewed", "an expired lease not yet revoked can get a full TTL from a new leader"},
		{"04-renewable-leases", "An expired lease cannot be renewed", "say revoked: a new leader's promote can renew an expired one"},
		{"07-etcd-election-recipe", "An expired lease cannot be renewed", "say revoked: a new leader's promote can renew an expired one"},
		{"06-tuning-the-ttl", "it cannot cause a loss", "a long election closes Session.Done() while etcd keeps the lease"},
		{"06-tuning-the-ttl", "unless lease checkpointing is on", "checkpoints matter only for leases with over 5 minutes left"},
	} {
		b, err := fs.ReadFile(FS(), "lessons/"+c.dir+"/quiz.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(squash(string(b)), squash(c.phrase)) {
			t.Errorf("quiz %s says %q again; it was corrected: %s", c.dir, c.phrase, c.why)
		}
	}
}

// Each of these is taught on one page and referred to elsewhere (issue 35
// C, "say it once"): the phrase that carries its explanation may appear in
// its home lesson only.
func TestTaughtOnce(t *testing.T) {
	dirs, err := fs.Glob(FS(), "lessons/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, phrase, home string }{
		{"the lease refresh on a raft leader change", "election timeout + remaining TTL", "06-tuning-the-ttl"},
		{"the quorum table", "| members | majority |", "02-consensus-and-cas"},
		{"why Done() is late", "gives up one TTL after the last", "04-renewable-leases"},
		{"the Mutex's mechanics", "ErrLockReleased", "07-etcd-election-recipe"},
		{"the pause budget of etcd's client", "T/3 + 0.5 + P ≤ T", "04-renewable-leases"},
	} {
		var in []string
		for _, d := range dirs {
			dir := strings.TrimPrefix(d, "lessons/")
			if strings.Contains(squash(lesson(t, dir)), squash(c.phrase)) {
				in = append(in, dir)
			}
		}
		if len(in) != 1 || in[0] != c.home {
			t.Errorf("%s (%q) is explained in %v; teach it once, in %s, and refer to it elsewhere", c.what, c.phrase, in, c.home)
		}
	}
}
