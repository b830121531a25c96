package experiment

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/internal/tui/timeline/timelinetest"
	"github.com/ownership-election/playground/lessons"
)

var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newModel is the screen of experiment name at w x h, asking its
// prediction first when ask is set (every scenario has one), else ready
// to run as after a prediction.
func newModel(t *testing.T, name string, ask bool, w, h int) *Model {
	t.Helper()
	m := New(screen.Context{Styles: theme.NewStyles(true, true), Learner: "tester"}, Options{Name: name})
	if err := m.err; err != nil {
		t.Fatal(err)
	}
	if !ask {
		m.phase = phaseReady
	}
	m.now = func() time.Time { return clock }
	m.SetSize(w, h)
	return m
}

func press(m *Model, keys ...string) (*Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "left":
			msg = tea.KeyPressMsg{Code: tea.KeyLeft}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "shift+tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
		case "end":
			msg = tea.KeyPressMsg{Code: tea.KeyEnd}
		case "home":
			msg = tea.KeyPressMsg{Code: tea.KeyHome}
		case "right":
			msg = tea.KeyPressMsg{Code: tea.KeyRight}
		default:
			msg = tea.KeyPressMsg{Code: rune(k[0]), Text: k}
		}
		_, cmd = m.Update(msg)
	}
	return m, cmd
}

func view(m *Model) string { return ansi.Strip(m.View()) }

// running puts a synthetic run state on the screen: what a tick copies
// from a real run of fencing (fencing on), 3.2 s in. b1 won with token 6,
// was paused past its TTL, etcd deleted its key, b3 took over with token
// 7, b1 woke and wrote with token 6 and was refused.
func running(m *Model) *Model {
	m.phase, m.started = phaseRunning, clock.Add(-3200*time.Millisecond)
	m.tl.Follow()
	m.snap = snapshot{
		replicas: []experiment.ReplicaState{
			{Name: "b1", Role: experiment.RoleOwner, Token: 6, LeaseTTL: 1, LeaseLeft: 0},
			{Name: "b2", Role: experiment.RoleCandidate, LeaseTTL: 1, LeaseLeft: 700 * time.Millisecond},
			{Name: "b3", Role: experiment.RoleOwner, Token: 7, LeaseTTL: 1, LeaseLeft: 900 * time.Millisecond},
		},
		resource: history.ResourceState{Fencing: true, Highest: 7, Value: "b3#8", Writer: "b3", Accepted: 16, Rejected: 1},
		// etcd's view: b1's key went with its lease; b3 holds the
		// election, b2 queues behind it. Read 200 ms ago with 0.6 s left.
		store: experiment.StoreState{At: clock.Add(-200 * time.Millisecond), Revision: 9,
			Keys: []history.StoreKey{
				{Key: "election-1/694d7c1e5f2a9b03", Value: "b3", CreateRevision: 7, ModRevision: 7, Version: 1, Lease: 0x694d7c1e5f2a9b03},
				{Key: "election-1/694d7c1e5f2a9b07", Value: "b2", CreateRevision: 8, ModRevision: 8, Version: 1, Lease: 0x694d7c1e5f2a9b07},
			},
			Leases: map[int64]experiment.StoreLease{0x694d7c1e5f2a9b03: {ID: 0x694d7c1e5f2a9b03, GrantedTTL: 1, Left: 600 * time.Millisecond, Precise: true}},
		},
		events: fencingEvents(),
	}
	m.snap.all = m.snap.replicas
	return m
}

// fencingEvents is the history of running's run.
func fencingEvents() []history.Event { return timelinetest.FencingEvents() }

func done(m *Model) *Model {
	m = running(m)
	m.phase = phaseDone
	m.snap.verdict = &history.Verdict{Scenario: "fencing", Showed: true,
		Summary: "Fencing off: a1's write with token 2 was accepted after token 3, overwriting a3's data. Fencing on: b1's write with token 6 was rejected (the resource had seen 7) and b3's data survived."}
	// As refresh does: the run's history judges the pick, and the cursor
	// goes to what the verdict is about.
	h := history.History{Scenario: m.sc.Name, Events: m.snap.events, Verdict: m.snap.verdict}
	if m.picked >= 0 {
		m.sc.Predict.Predicted(&h, m.picked)
	}
	m.judgePrediction(&h)
	t := m.timeline()
	t.Focus(scenario.Focus(&h))
	m.tl = t
	return m
}

func TestPredictBeforeRun(t *testing.T) {
	m := newModel(t, "fencing", true, 80, 24)
	if m.phase != phasePredict {
		t.Fatalf("phase %v, want predict", m.phase)
	}
	m, cmd := press(m, "enter")
	if cmd != nil || m.phase != phasePredict || !strings.Contains(view(m), "pick the outcome") {
		t.Fatalf("enter before predicting should only remind: phase %v\n%s", m.phase, view(m))
	}
	m, cmd = press(m, "9")
	if cmd != nil || m.phase != phasePredict {
		t.Fatal("an out-of-range number was taken as a prediction")
	}
	m, cmd = press(m, "2")
	if cmd == nil || m.phase != phaseStarting {
		t.Fatalf("predicting should start the run: phase %v", m.phase)
	}
	if m.picked != m.order[1] {
		t.Fatalf("picked option %d, want %d (display position 2)", m.picked, m.order[1])
	}
	// The run carries the pick, so its history records it judged.
	if _, p, env := m.runArgs(); p.Step != true || env.Prediction != m.picked+1 {
		t.Fatalf("the run is started with prediction %d, want option %d counted from 1", env.Prediction, m.picked+1)
	}
}

// TestPredictionIsTheScenarios: the screen asks the scenario's own
// question, every option of it, and no question a lesson asks.
func TestPredictionIsTheScenarios(t *testing.T) {
	c, err := lessons.Load(lessons.Sources{Course: content.FS()})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range scenario.Names() {
		m := newModel(t, name, true, 158, 43)
		v := flat(view(m))
		sc := scenario.Lookup(name)
		if m.phase != phasePredict || !strings.Contains(v, flat(sc.Predict.Prompt)) {
			t.Errorf("%s: the screen does not ask the scenario's prediction:\n%s", name, v)
		}
		for _, o := range sc.Predict.Options {
			if !strings.Contains(v, flat(o.Text)) {
				t.Errorf("%s: option %q is not offered", name, o.Text)
			}
		}
		for _, l := range c.Lessons {
			if l.Quiz == nil {
				continue
			}
			for _, q := range l.Quiz.Questions {
				if p := flat(q.Prompt); len(p) > 20 && strings.Contains(v, p) {
					t.Errorf("%s: the screen asks %s's question %s, which a lesson asks", name, l.ID, q.ID)
				}
			}
		}
	}
}

// answerWords are, per scenario, the option its run exists to bear out
// (by its first words) and words that say that outcome: none of them may
// be on the screen before the prediction. They are picked by hand, so a
// paraphrase would slip through; a new scenario fails here until someone
// has read its header and listed them.
var answerWords = map[string]struct {
	option string
	words  []string
}{
	"singleton-vs-election": {"Within about one lease TTL", []string{"within", "a little over", "one ttl"}},
	"cas-race":              {"Several different replicas", []string{"several", "different replicas", "each wins", "fair"}},
	"ttl-unlock-bug":        {"Naive: the lock is free", []string{"held by p2", "still held", "refused", "p2 keeps", "p3 takes", "is free"}},
	"renewal":               {"It no longer knows the lease", []string{"too late", "no longer", "forgot", "expired", "unknown"}},
	"fencing":               {"Off: the old owner's", []string{"taken", "refused", "rejected", "overwrit", "lands", "survive"}},
	"failover-timing":       {"At least once", []string{"flap", "at least once", "false failover", "moves anyway"}},
	"quorum":                {"Its renewals go unanswered", []string{"unanswer", "available", "step down", "steps down", "stops acting", "only as"}},
	"leader-change":         {"About a full TTL later", []string{"extend", "full ttl", "reset", "starts over", "longer"}},
	"lock-waiters":          {"About one per waiter", []string{"everybody", "herd", "one per waiter", "stampede", "all wake"}},
	"shard-ownership":       {"About one TTL after the crash", []string{"one ttl", "after a ttl", "expire"}},
	"least-privilege":       {"Permission denied", []string{"denied", "refus", "forbidden", "outside its role"}},
	"partitioned-primary":   {"Takes it, on top", []string{"takes it", "on top", "lands", "overwrit"}},
	"flapping-link":         {"Pre-Vote off: new leaders", []string{"term after term", "new leaders", "churn", "prevents"}},
	"zombie-controller":     {"Only where the write is a Txn", []string{"txn compar", "only where", "overwrit", "drops"}},
}

// TestPredictionKeepsTheAnswer: what the screen shows before the
// prediction (where it runs, the title, the faults, the status line and
// the question, everything but the options) says none of the words of
// the answer the run exists to show. The scenario's name is checked too:
// two were renamed for saying their outcome (internal/experiment/aliases).
func TestPredictionKeepsTheAnswer(t *testing.T) {
	for _, name := range scenario.Names() {
		want, ok := answerWords[name]
		if !ok {
			t.Errorf("%s: no answer words listed: read its header and list them", name)
			continue
		}
		sc := scenario.Lookup(name)
		if !slices.ContainsFunc(sc.Predict.Options, func(o experiment.Option) bool { return strings.HasPrefix(o.Text, want.option) }) {
			t.Errorf("%s: no option begins %q", name, want.option)
		}
		m := newModel(t, name, true, 200, 50)
		before := flat(view(m))
		for _, o := range sc.Predict.Options {
			before = strings.ReplaceAll(before, flat(o.Text), "")
		}
		before = strings.ToLower(before)
		for _, w := range want.words {
			if strings.Contains(before, w) {
				t.Errorf("%s: %q, a word of its answer, is on the screen before the prediction:\n%s", name, w, before)
			}
		}
	}
}

func TestReadyKeysChangeTheNextRun(t *testing.T) {
	m := newModel(t, "fencing", false, 80, 24)
	if m.phase != phaseReady {
		t.Fatalf("without a question the screen should be ready, is %v", m.phase)
	}
	m, _ = press(m, "+", "+")
	if m.params.TTL != 3 {
		t.Errorf("TTL %d after ++, want 3", m.params.TTL)
	}
	m, _ = press(m, "-", "-", "-", "-")
	if m.params.TTL != 1 {
		t.Errorf("TTL %d after ----, want 1 (the minimum)", m.params.TTL)
	}
	m, _ = press(m, "f")
	if m.params.Fencing == nil || *m.params.Fencing || !strings.Contains(view(m), "fencing off") {
		t.Errorf("f once: fencing should be off only\n%s", view(m))
	}
	m, _ = press(m, "f")
	if m.params.Fencing == nil || !*m.params.Fencing {
		t.Error("f twice: fencing should be on only")
	}
	m, _ = press(m, "f")
	if m.params.Fencing != nil {
		t.Error("f three times: back to both variants")
	}
	m, _ = press(m, "a")
	if !m.params.Step || !strings.Contains(view(m), "step mode") {
		t.Error("a should switch the next run to step mode")
	}
}

func TestRunningViewAndSelection(t *testing.T) {
	m := running(newModel(t, "fencing", false, 80, 24))
	v := view(m)
	for _, want := range []string{"▸b1 owner t6", "b3 owner t7", "6━━✓━━━━━▒▒▒", "━━━✗━━!━━", "etcd b3 rev 9", `"b3#8" by b3`, "rejected 1", "running 3.2s"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "renewed, TTL") {
		t.Error("lease renewals should fold into counts, not show one a line")
	}
	m, _ = press(m, "tab", "tab")
	if m.sel != 2 {
		t.Errorf("selected %d after two tabs among 3 replicas, want 2", m.sel)
	}
	m, _ = press(m, "tab")
	if m.sel != 0 {
		t.Errorf("selected %d after a third tab, want round to 0", m.sel)
	}
	m, _ = press(m, "tab", "tab")
	m, _ = press(m, "shift+tab")
	if m.sel != 1 || !strings.Contains(view(m), "▸b2") {
		t.Errorf("selected %d, want b2 marked\n%s", m.sel, view(m))
	}
}

// TestResultShowsPrediction: after the run the pick stands beside what
// the checker found, judged by the run's history: the test history has
// only the fencing-on part, where the old owner's write was refused, so
// the answers judged on that part alone are borne out (both say "with
// fencing the new owner's") and "the old owner's both times" is not.
func TestResultShowsPrediction(t *testing.T) {
	m := newModel(t, "fencing", true, 80, 24)
	m.picked = optionWith(t, m, "The old owner's both times")
	v := flat(view(done(m)))
	pick := m.sc.Predict.Options[m.picked].Text
	if !strings.Contains(v, "result the effect showed") || !strings.Contains(v, "✗ not what happened") || !strings.Contains(v, "You predicted: The old owner's both times") {
		t.Fatalf("result panel:\n%s", v)
	}
	if m.predicted == nil || m.predicted.Picked != pick || m.predicted.Correct {
		t.Fatalf("judged %+v, want %q not borne out", m.predicted, pick)
	}
	refused := m.sc.Predict.Options[optionWith(t, m, "The new owner's both times: even with fencing off")].Text
	if !strings.Contains(v, "What this run did: "+m.sc.Predict.Options[0].Text+"; "+refused) {
		t.Fatalf("what the run bore out:\n%s", v)
	}
	m.SetSize(158, 43)
	if v := view(m); !strings.Contains(v, "You predicted: "+pick) || !strings.Contains(v, "What this run did: Off: the old owner's") {
		t.Fatalf("wide result panel:\n%s", v)
	}
	m.predicted.Correct = true
	if v := view(m); !strings.Contains(v, "✓ right") {
		t.Fatalf("right prediction not marked:\n%s", v)
	}
}

// optionWith is the index of m's prediction option that begins with prefix.
func optionWith(t *testing.T, m *Model, prefix string) int {
	t.Helper()
	for i, o := range m.sc.Predict.Options {
		if strings.HasPrefix(o.Text, prefix) {
			return i
		}
	}
	t.Fatalf("no option begins %q", prefix)
	return -1
}

// TestPredictionJudgedByTheRun: the same pick is right in a run that bore
// it out and wrong in one that did not, and the root hears the first
// judgement once, with the scenario's question id and what the run did.
func TestPredictionJudgedByTheRun(t *testing.T) {
	m := newModel(t, "fencing", true, 80, 24)
	taken := optionWith(t, m, "Off: the old owner's")
	// The history has only the fencing-off part, judged alone: the
	// answers that say "off: the old owner's" are borne out.
	bore := []string{m.sc.Predict.Options[taken].Text, m.sc.Predict.Options[optionWith(t, m, "The old owner's both times")].Text}
	m.picked, m.judge = taken, true
	h := zombieTakenHistory()
	m.sc.Predict.Predicted(&h, taken)
	m.judgePrediction(&h)
	if m.predicted == nil || !m.predicted.Correct || !slices.Equal(m.outcomeTexts(), bore) {
		t.Fatalf("a run whose stale write was taken: judged %+v, bore out %q", m.predicted, m.outcomeTexts())
	}
	msg := m.judged()().(screen.Predicted)
	if msg.Name != "fencing" || msg.Question != progress.PredictReviewID("fencing") || !msg.Right || !slices.Equal(msg.Outcome, m.outcomeTexts()) {
		t.Fatalf("sent %+v", msg)
	}
	if m.judged() != nil {
		t.Fatal("a second run's judgement went to the root too")
	}
	h = zombieTakenHistory()
	h.Events[len(h.Events)-2].Kind = history.WriteRejected // the resource refused it instead
	h.Events[len(h.Events)-2].Facts.Succeeded = false
	m.sc.Predict.Predicted(&h, taken)
	m.judgePrediction(&h)
	if m.predicted.Correct {
		t.Fatalf("a run that refused the stale write bore out %q", m.predicted.Picked)
	}
	if q := ReviewQuestion(msg.Question, msg.Outcome); q == nil || q.ID != msg.Question || !q.Options[taken].Correct || q.Options[(taken+1)%len(q.Options)].Correct {
		t.Fatalf("review question %+v", q)
	}
	if ReviewQuestion("st-predict", msg.Outcome) != nil || ReviewQuestion(msg.Question, []string{"something else"}) != nil {
		t.Fatal("a review question from an id or outcome that is no scenario's")
	}
}

// zombieTakenHistory is a fencing-off part where the paused owner a1's
// write with token 2 is taken after a3 won with token 3.
func zombieTakenHistory() history.History {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	w := func(at int, r string, tok int64) history.Event {
		return history.Event{At: ms(at), Kind: history.WriteAccepted, Replica: r, Token: tok, Facts: &history.Facts{Op: "write", Token: tok, Succeeded: true}}
	}
	return history.History{Scenario: "fencing", Events: []history.Event{
		{Kind: history.PartBegins, Text: "fencing off"},
		{At: ms(10), Kind: history.Acquired, Replica: "a1", Token: 2}, w(20, "a1", 2),
		{At: ms(30), Kind: history.Paused, Replica: "a1"},
		{At: ms(40), Kind: history.Acquired, Replica: "a3", Token: 3}, w(50, "a3", 3),
		{At: ms(60), Kind: history.Resumed, Replica: "a1"}, w(70, "a1", 2),
		{At: ms(80), Kind: history.Lost, Replica: "a1"},
	}}
}

func TestFitsTheSize(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 16}, {160, 45}} {
		models := map[string]*Model{
			"predict": newModel(t, "fencing", true, size[0], size[1]),
			"running": running(newModel(t, "fencing", false, size[0], size[1])),
			"done":    done(newModel(t, "fencing", true, size[0], size[1])),
		}
		// Every experiment's header, with a store holding a queue, a
		// plain key and shards, and a pending step.
		for _, name := range scenario.Names() {
			m := running(newModel(t, name, false, size[0], size[1]))
			m.snap.atStep, m.snap.pending = true, "wake b1: it writes with its old token 6"
			m.snap.store.Keys = append(m.snap.store.Keys,
				history.StoreKey{Key: "lock", Value: "p2", CreateRevision: 10, ModRevision: 12, Version: 3, Lease: 0x694d7c1e5f2a9b03},
				history.StoreKey{Key: "shards/00", Value: "w1", CreateRevision: 13},
				history.StoreKey{Key: "shards/01", Value: "w1", CreateRevision: 14})
			models["running "+name] = m
		}
		for name, m := range models {
			lines := strings.Split(view(m), "\n")
			if len(lines) > size[1] {
				t.Errorf("%s at %dx%d: %d lines", name, size[0], size[1], len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("%s at %dx%d: line %d is %d wide: %q", name, size[0], size[1], i+1, w, l)
				}
			}
		}
	}
}

// Golden screens at the two reference terminal sizes, in the area the
// root gives a screen that draws its own title (a column of margin each
// side, the status and help lines under it); refresh with
// go test ./internal/tui/screen/experiment -run Golden -update.
func TestGoldenScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		w, h := size[0]-2, size[1]-2
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		t.Run("predict_"+name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(view(newModel(t, "fencing", true, w, h))))
		})
		t.Run("running_"+name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(view(running(newModel(t, "fencing", false, w, h)))))
		})
		t.Run("done_"+name, func(t *testing.T) {
			m := newModel(t, "fencing", true, w, h)
			m.picked = 0
			golden.RequireEqual(t, []byte(view(done(m))))
		})
		t.Run("scrubbed_"+name, func(t *testing.T) {
			m := running(newModel(t, "fencing", false, w, h))
			press(m, "left", "left", "left", "left", "left", "left", "left", "left")
			golden.RequireEqual(t, []byte(view(m)))
		})
	}
}

// TestRealRun drives a real cas-race on an in-process etcd through the
// screen's own commands and ticks until the verdict shows: the learner's
// prediction starts it, the run's history records it judged, and the
// root hears that judgement once.
func TestRealRun(t *testing.T) {
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	m := newModel(t, "cas-race", true, 80, 24)
	m.params.Replicas = 5
	m.now, m.tempo = time.Now, 0 // auto-play takes each step at once
	m, cmd := press(m, "1")
	if cmd == nil {
		t.Fatal("the prediction did not start the run")
	}
	picked := m.sc.Predict.Options[m.order[0]].Text
	msg := cmd()
	_, cmd = m.Update(msg)
	if m.err != nil || m.phase != phaseRunning {
		t.Fatalf("start: phase %v, err %v", m.phase, m.err)
	}
	defer m.Close()
	deadline := time.Now().Add(30 * time.Second)
	for m.phase != phaseDone {
		if time.Now().After(deadline) {
			t.Fatal("the run did not finish in 30 s")
		}
		if cmd == nil {
			t.Fatal("no tick scheduled while running")
		}
		_, cmd = m.Update(cmd())
	}
	v := view(m)
	if !strings.Contains(v, "result the effect showed") || !strings.Contains(v, "Exactly one winner in 100 of 100") {
		t.Fatalf("final screen:\n%s", v)
	}
	// The timeline's heading says the run is over, and when: the time of
	// its verdict, its last event.
	last := m.snap.events[len(m.snap.events)-1]
	ended := fmt.Sprintf("ended at %.3fs", last.At.Seconds())
	if last.Kind != history.Finished || !strings.Contains(v, ended) || strings.Contains(v, "end: live") {
		t.Errorf("the finished run's timeline heading does not say %q (last event %s):\n%s", ended, last.Kind, v)
	}
	// The run's end saves its history, which replay reads back, and
	// tells the root how the prediction fared.
	var predicted []screen.Predicted
	for _, c := range cmd().(tea.BatchMsg) {
		switch msg := c().(type) {
		case savedMsg:
			m.Update(msg)
		case screen.Predicted:
			predicted = append(predicted, msg)
		}
	}
	if len(predicted) != 1 || predicted[0].Question != progress.PredictReviewID("cas-race") || m.predicted == nil || predicted[0].Right != m.predicted.Correct || m.predicted.Picked != picked {
		t.Fatalf("prediction sent %+v, judged %+v, want one judgement of %q", predicted, m.predicted, picked)
	}
	if m.judged() != nil {
		t.Fatal("the judgement would go to the root twice")
	}
	m.SetSize(160, 45) // room for the line that says where
	if m.saveErr != nil || m.saved == "" || m.Status() != "history saved" || !strings.Contains(view(m), "saved: "+m.saved) {
		t.Fatalf("history not saved: %q, %v, status %q", m.saved, m.saveErr, m.Status())
	}
	f, err := os.Open(m.saved)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := scenario.ReadHistory(f)
	if err != nil || h.Verdict == nil || !h.Verdict.Showed || len(h.Events) != len(m.snap.events) {
		t.Fatalf("saved history: err %v, verdict %v, %d events (the screen had %d)", err, h.Verdict, len(h.Events), len(m.snap.events))
	}
	if h.Prediction == nil || *h.Prediction != *m.predicted {
		t.Fatalf("saved prediction %+v, the screen judged %+v", h.Prediction, m.predicted)
	}
}

func TestUnknownExperimentSaysSo(t *testing.T) {
	m := New(screen.Context{Styles: theme.NewStyles(true, true)}, Options{Name: "no-such-experiment"})
	m.SetSize(80, 24)
	if v := view(m); !strings.Contains(v, "no experiment") {
		t.Fatalf("unknown experiment view: %q", v)
	}
	if _, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
		t.Fatal("an unknown experiment started something")
	}
}

// The screen says which etcd a run uses.
func TestSaysWhereItRuns(t *testing.T) {
	m := New(screen.Context{Styles: theme.NewStyles(true, true)}, Options{Name: "fencing"})
	m.SetSize(80, 24)
	if v := view(m); !strings.Contains(v, "Runs on an in-process etcd started for this run") {
		t.Fatalf("no 'Runs on' line:\n%s", v)
	}
}

// When the shared cluster given on the command line failed, an experiment
// does not quietly run on an in-process etcd: it says the shared one is
// unreachable and runs elsewhere only when the learner says so; the top
// line then says where it runs.
func TestAsksBeforeLeavingAFailedSharedEtcd(t *testing.T) {
	st := theme.NewStyles(true, true)
	m := New(screen.Context{Styles: st}, Options{Name: "renewal", Shared: "https://class.example:2379", SharedErr: errors.New("context deadline exceeded")})
	m.SetSize(100, 30)
	v := view(m)
	if !strings.Contains(v, "The shared etcd at https://class.example:2379 is not reachable: context deadline exceeded") || !strings.Contains(v, "y run it on an in-process etcd") {
		t.Fatalf("no question before falling back:\n%s", v)
	}
	m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if v := view(m); !strings.Contains(v, "not reachable") {
		t.Fatalf("another key fell back:\n%s", v)
	}
	m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if v := view(m); !strings.Contains(v, "Runs on an in-process etcd started for this run") {
		t.Fatalf("after y:\n%s", v)
	}
	m.Close()

	// Still connecting: it waits, and a failure then asks too.
	m = New(screen.Context{Styles: st}, Options{Name: "renewal", Shared: "https://class.example:2379"})
	m.SetSize(100, 30)
	if v := view(m); !strings.Contains(v, "Connecting to the shared etcd at https://class.example:2379") {
		t.Fatalf("while connecting:\n%s", v)
	}
	m.Update(screen.EtcdReady{Err: errors.New("connection refused"), External: true})
	if v := view(m); !strings.Contains(v, "not reachable: connection refused") {
		t.Fatalf("after the failure:\n%s", v)
	}
}

// TestKeysWithoutARunSaySo: a fault or step key before a run explains
// itself instead of doing nothing.
func TestKeysWithoutARunSaySo(t *testing.T) {
	m := newModel(t, "cas-race", false, 80, 24)
	for _, k := range []string{"p", "n", "c"} {
		m, _ = press(m, k)
		if v := view(m); !strings.Contains(v, "nothing is running: enter starts a run") {
			t.Fatalf("%s before a run said nothing:\n%s", k, v)
		}
	}
}

// TestAutoPlayDuringARunUpdatesTheHeader: a during a step-mode run says
// auto-play at once and keeps it for the next run.
func TestAutoPlayDuringARunUpdatesTheHeader(t *testing.T) {
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	m := New(screen.Context{Styles: theme.NewStyles(true, true)}, Options{Name: "cas-race", Step: true})
	m.SetSize(80, 24)
	m, cmd := press(m, "1") // the prediction starts the run
	_, _ = m.Update(cmd())
	if m.phase != phaseRunning {
		t.Fatalf("phase %v, err %v", m.phase, m.err)
	}
	defer m.Close()
	m.refresh()
	if v := view(m); !strings.Contains(v, "step mode") {
		t.Fatalf("a step-mode run does not say so:\n%s", v)
	}
	m, _ = press(m, "a")
	if v := view(m); strings.Contains(v, "step mode") {
		t.Fatalf("after a, the header still says step mode:\n%s", v)
	}
	if m.params.Step {
		t.Fatal("the next run would start in step mode again")
	}
}

// TestQuietRunWithAStoppedReplicaSaysWhy: a run that emits nothing while
// the learner holds a replica paused says it is waiting for that replica.
func TestQuietRunWithAStoppedReplicaSaysWhy(t *testing.T) {
	m := running(newModel(t, "fencing", false, 80, 24))
	m.snap.replicas[0].Paused = true
	m.changed = clock.Add(-time.Second)
	if v := view(m); strings.Contains(v, "Nothing has happened") {
		t.Fatalf("a run quiet for 1 s is called stalled:\n%s", v)
	}
	m.changed = clock.Add(-6 * time.Second)
	v := view(m)
	if !strings.Contains(v, "Nothing has happened for 6 s") || !strings.Contains(v, "b1 is paused (p resumes it)") {
		t.Fatalf("a stalled run does not say why:\n%s", v)
	}
	m.snap.replicas[0].Paused = false
	if v := view(m); strings.Contains(v, "Nothing has happened") {
		t.Fatalf("stall message with no replica held down:\n%s", v)
	}
}

// TestFencingRowOnlyAboutFencing: the resource line names fencing and the
// highest token only in the fencing experiment, and appears only in the
// experiments whose replicas write to the resource.
func TestFencingRowOnlyAboutFencing(t *testing.T) {
	if v := view(running(newModel(t, "fencing", false, 100, 30))); !strings.Contains(v, "resource fencing on · highest 7") {
		t.Fatalf("fencing experiment without its fencing row:\n%s", v)
	}
	v := view(running(newModel(t, "renewal", false, 100, 30)))
	if strings.Contains(v, "resource fencing") || strings.Contains(v, "highest 7") || !strings.Contains(v, `resource "b3#8" by b3`) {
		t.Fatalf("renewal shows the fencing row, or no resource row:\n%s", v)
	}
	for _, name := range []string{"ttl-unlock-bug", "shard-ownership", "cas-race"} {
		if v := view(running(newModel(t, name, false, 100, 30))); strings.Contains(v, "\nresource") {
			t.Fatalf("%s, whose replicas never write to the resource, shows its row:\n%s", name, v)
		}
	}
}

// TestStorePanel: the store's view shows what etcd holds beside the
// replicas: the holder of a queue with its lease counting down between
// readings, a single key with its revisions, version and lease, shards
// counted per owner, and "(no key)" when the run's prefix is empty.
func TestStorePanel(t *testing.T) {
	m := running(newModel(t, "fencing", false, 80, 24))
	v := view(m)
	for _, want := range []string{"etcd holds election-1/ 2 keys · oldest b3 (create 7)", "lease …9b03 TTL 1s, 0.4s left", "then b2 (8)"} {
		if !strings.Contains(v, want) {
			t.Errorf("80x24 lacks %q:\n%s", want, v)
		}
	}
	// The countdown runs between readings while the run is on.
	m.now = func() time.Time { return clock.Add(300 * time.Millisecond) }
	if v := view(m); !strings.Contains(v, "TTL 1s, 0.1s left") {
		t.Errorf("no countdown between readings:\n%s", v)
	}
	m.now = func() time.Time { return clock }

	// Wide: beside the cards, with the reading's revision.
	m.SetSize(160, 45)
	if v := view(m); !strings.Contains(v, "│ etcd holds · revision 9") || !strings.Contains(v, "oldest b3 (create 7) · lease …9b03 TTL 1s, 0.4s left") {
		t.Errorf("160x45 has no panel beside the cards:\n%s", v)
	}

	m = running(newModel(t, "ttl-unlock-bug", false, 100, 30))
	m.snap.store = experiment.StoreState{At: clock, Revision: 12, Keys: []history.StoreKey{
		{Key: "lock-naive", Value: "p2", CreateRevision: 11, ModRevision: 11, Version: 1, Lease: 0x7a2b},
	}, Leases: map[int64]experiment.StoreLease{0x7a2b: {ID: 0x7a2b, GrantedTTL: 11, Left: 4 * time.Second}}}
	if v := view(m); !strings.Contains(v, "lock-naive = p2 · lease …7a2b TTL 11s, 4–5s left · create 11 · mod 11 · version 1") {
		t.Errorf("single key (etcd's whole seconds):\n%s", v)
	}
	m.snap.store.Leases[0x7a2b] = experiment.StoreLease{ID: 0x7a2b, Gone: true}
	if v := view(m); !strings.Contains(v, "lease …7a2b expired") {
		t.Errorf("a lease etcd no longer knows:\n%s", v)
	}
	m.snap.store.Keys = nil
	if v := view(m); !strings.Contains(v, "etcd holds (no key)") {
		t.Errorf("empty prefix:\n%s", v)
	}

	m = running(newModel(t, "shard-ownership", false, 80, 24))
	m.snap.store = experiment.StoreState{At: clock, Keys: []history.StoreKey{
		{Key: "workers/w1", Value: "w1", CreateRevision: 2, Lease: 1},
		{Key: "workers/w2", Value: "w2", CreateRevision: 3, Lease: 2},
		{Key: "shards/00", Value: "w1", CreateRevision: 4, ModRevision: 4},
		{Key: "shards/01", Value: "w2", CreateRevision: 5, ModRevision: 5},
		{Key: "shards/02", Value: "w1", CreateRevision: 6, ModRevision: 6},
	}}
	if v := view(m); !strings.Contains(v, "shards/ 3 keys by value · w1 2 · w2 1") {
		t.Errorf("shards per owner:\n%s", v)
	}
	if v := view(m); !strings.Contains(v, "workers/ 2 keys · oldest w1") {
		t.Errorf("workers:\n%s", v)
	}
}

// TestStepModeInTheFooter: the footer always says which mode a run is in
// and how to switch; a on the ready screen tells the root the choice.
func TestStepModeInTheFooter(t *testing.T) {
	m := New(screen.Context{Styles: theme.NewStyles(true, true)}, Options{Name: "fencing", Step: true})
	m.SetSize(80, 24)
	m.now = func() time.Time { return clock }
	if s := m.Status(); s != "next run: step mode · a auto-play" {
		t.Errorf("ready, step: %q", s)
	}
	m, cmd := press(m, "a")
	if s := m.Status(); s != "next run: auto-play, 4 s a step · t tempo · a step mode" {
		t.Errorf("after a: %q", s)
	}
	if cmd == nil || cmd() != (screen.StepModeChosen{Step: false}) {
		t.Error("the choice of auto-play did not reach the root")
	}
	m = running(m)
	m.params.Step = true
	if s := m.Status(); s != "step mode · space next · a auto-play" {
		t.Errorf("running, step: %q", s)
	}
	if v := view(m); !strings.Contains(v, "running 3.2s · step mode ·") {
		t.Errorf("header, between steps:\n%s", v)
	}
	// At a step, with the owner's writes flooding in after the phase
	// was announced: the header says space, and the step stays in view.
	m.snap.atStep, m.snap.pending = true, "wake b1: it writes with its old token 6"
	for i := range 20 {
		m.snap.events = append(m.snap.events, history.Event{At: 3*time.Second + time.Duration(i)*100*time.Millisecond, Kind: history.WriteAccepted, Replica: "b3", Token: 7, Text: fmt.Sprintf("write %q with token 7 accepted", fmt.Sprintf("b3#%d", i))})
	}
	v := view(m)
	if !strings.Contains(v, "step mode: space for the next step") {
		t.Errorf("header, at a step:\n%s", v)
	}
	if !strings.Contains(v, "▶ next step (space): wake b1: it writes with its old token 6") || !strings.Contains(v, "⚑ 1 violation") || !strings.Contains(v, "21 writes accepted from b3 with token 7") {
		t.Errorf("the pending step or the violation scrolled away:\n%s", v)
	}
	m.params.Step = false
	if s := m.Status(); s != "auto-play, 4 s a step · t tempo · a step mode" {
		t.Errorf("running, auto: %q", s)
	}
	if h := m.ShortHelp(); h[1].Help().Key != "space" {
		t.Errorf("the step key's help says %q, want space", h[1].Help().Key)
	}
}

// TestScriptWaitingSaysSoAtOnce: when the script says it waits for a
// replica the learner holds down, the screen says so at once, with the
// key that lets it go in the state the replica is in, and stops saying so
// once it is let go.
func TestScriptWaitingSaysSoAtOnce(t *testing.T) {
	m := running(newModel(t, "ttl-unlock-bug", false, 100, 30))
	m.changed = clock // nothing quiet about it: the event just came
	m.snap.replicas = []experiment.ReplicaState{{Name: "p1", Role: experiment.RoleFollower}, {Name: "p2", Role: experiment.RoleFollower, Paused: true}}
	m.snap.events = append(m.snap.events, history.Event{At: 4 * time.Second, Kind: history.Waiting, Value: 1, Replica: "p2", Text: "the script waits for p2 to take the lock: p2 is paused"})
	v := view(m)
	if !strings.Contains(v, "The script waits for p2, which is paused: select it (tab) and press p to resume it.") {
		t.Fatalf("no waiting message:\n%s", v)
	}
	m.sel = 1
	if v := view(m); !strings.Contains(v, "The script waits for p2, which is paused: press p to resume it.") {
		t.Fatalf("selected replica:\n%s", v)
	}
	m.snap.replicas[1].Paused = false
	if v := view(m); strings.Contains(v, "The script waits") {
		t.Fatalf("message stays after the resume:\n%s", v)
	}

	// A takeover any of several can make, while the learner has cut both
	// off: the hint says x heals them, whatever the script's sentence
	// says, and goes when the script says it goes on.
	m.snap.replicas = []experiment.ReplicaState{{Name: "a1", Role: experiment.RoleOwner, Token: 2},
		{Name: "a2", Role: experiment.RoleCandidate, Partitioned: true}, {Name: "a3", Role: experiment.RoleCandidate, Partitioned: true}}
	m.sel = 0
	m.snap.events = append(m.snap.events, history.Event{At: 5 * time.Second, Kind: history.Waiting, Value: 1,
		Text: "the script waits for one of a2, a3 to take over from the paused owner: a2 is cut off, a3 is cut off"})
	v = view(m)
	if !strings.Contains(v, "The script waits for a2 or a3, both cut off: select one (tab) and press x to heal it.") {
		t.Fatalf("no message for a takeover nobody can make:\n%s", v)
	}
	if strings.Contains(v, "press p") || strings.Contains(v, "paused owner") {
		t.Fatalf("the hint names a pause nobody is in:\n%s", v)
	}
	m.snap.events = append(m.snap.events, history.Event{At: 6 * time.Second, Kind: history.Waiting, Text: "the script goes on: a3 is free"})
	if v := view(m); strings.Contains(v, "The script waits") {
		t.Fatalf("message stays after the script goes on:\n%s", v)
	}
}

// TestHintsPerStateFit78: for every way of holding the replicas a script
// waits for (paused, cut off, crashed, mixed; one or several; selected
// or not), the hint names the key that frees each, and none of the
// other keys, in one line of at most 78 cells (an 80-column terminal
// less the margins).
func TestHintsPerStateFit78(t *testing.T) {
	states := map[string]experiment.ReplicaState{
		"paused":  {Paused: true},
		"cut off": {Partitioned: true},
		"crashed": {Crashed: true, Role: experiment.RoleCrashed},
	}
	keyOf := map[string]string{"paused": "p", "cut off": "x", "crashed": "r"}
	names := []string{"replica-10", "replica-11", "replica-12"}
	combos := [][]string{{"paused"}, {"cut off"}, {"crashed"}, {"paused", "paused"}, {"cut off", "cut off", "cut off"},
		{"paused", "cut off"}, {"crashed", "paused", "cut off"}}
	for _, combo := range combos {
		for _, sel := range []int{0, len(combo)} { // a waited-for one selected, or another
			var rs []experiment.ReplicaState
			for i, st := range combo {
				r := states[st]
				r.Name = names[i]
				rs = append(rs, r)
			}
			rs = append(rs, experiment.ReplicaState{Name: "free", Role: experiment.RoleOwner})
			e := history.Event{Kind: history.Waiting, Value: 1, Text: "the script waits for one of " + strings.Join(names[:len(combo)], ", ") + " to take over"}
			if len(combo) == 1 {
				e = history.Event{Kind: history.Waiting, Value: 1, Replica: names[0], Text: "the script waits for " + names[0]}
			}
			hint := holdHint(waitedFor(e, rs, sel), 78)
			if w := ansi.StringWidth(hint); w > 78 || hint == "" {
				t.Errorf("%v, selected %d: %d cells: %q", combo, sel, w, hint)
			}
			for st, k := range keyOf {
				has := strings.Contains(hint, " "+k+" ")
				if want := slices.Contains(combo, st); has != want {
					t.Errorf("%v, selected %d: names key %s: %v, want %v: %q", combo, sel, k, has, want, hint)
				}
			}
		}
	}
}

// TestTTLKeysKeepToTheScenariosRange: - stops at the shortest TTL the
// scenario works with, not at 1s.
func TestTTLKeysKeepToTheScenariosRange(t *testing.T) {
	m := newModel(t, "leader-change", false, 80, 24)
	m, _ = press(m, "-", "-", "-", "-", "-")
	if m.params.TTL != 3 || !strings.Contains(view(m), "TTL 3s") {
		t.Fatalf("TTL %d after five -, want the scenario's minimum 3s", m.params.TTL)
	}
}

// TestRetiredReplicasLeaveTheCards: the first variant's retired replicas
// make room for the second's; at the end, when all are retired, the cards
// end on the last ones.
func TestRetiredReplicasLeaveTheCards(t *testing.T) {
	rs := func(roles ...experiment.Role) []experiment.ReplicaState {
		var out []experiment.ReplicaState
		for i, r := range roles {
			out = append(out, experiment.ReplicaState{Name: fmt.Sprintf("r%d", i+1), Role: r})
		}
		return out
	}
	ret, own, cand := experiment.RoleRetired, experiment.RoleOwner, experiment.RoleCandidate
	got, sel := cardsOf(rs(ret, ret, own, cand), 4, 0)
	if len(got) != 2 || got[0].Name != "r3" || sel != 0 {
		t.Fatalf("second variant: cards %v, selected %d", got, sel)
	}
	got, sel = cardsOf(rs(ret, ret, ret, ret), 2, 0)
	if len(got) != 4 || sel != 3 {
		t.Fatalf("all retired: %d cards, selected %d; want 4 and the last", len(got), sel)
	}
	if _, sel = cardsOf(rs(ret, ret), 2, 1); sel != 1 {
		t.Fatalf("all retired, all shown before: selection moved to %d", sel)
	}
}

// TestOneLineHelpFits80: the one-line help names the keys that act in
// the screen's phase, and with the root's global keys after it (esc
// back, ? help) it fits the 78 cells an 80-column terminal gives it: it
// was cut after "p pause", esc and ? with it, whatever the phase.
func TestOneLineHelpFits80(t *testing.T) {
	h := help.New()
	h.SetWidth(78)
	global := []key.Binding{
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	}
	models := map[string]*Model{
		"predict": newModel(t, "fencing", true, 78, 22),
		"ready":   newModel(t, "fencing", false, 78, 22),
		"running": running(newModel(t, "fencing", false, 78, 22)),
		"done":    done(newModel(t, "fencing", true, 78, 22)),
	}
	want := map[string]string{"predict": "1-6 predict", "ready": "enter run", "running": "space next step", "done": "enter run"}
	for name, m := range models {
		for _, step := range []bool{true, false} {
			m.params.Step = step
			line := ansi.Strip(h.ShortHelpView(append(m.ShortHelp(), global...)))
			if strings.Contains(line, "…") || !strings.Contains(line, "? help") || !strings.Contains(line, want[name]) && !(name == "running" && !step) {
				t.Errorf("%s (step mode %v): %q", name, step, line)
			}
			if name == "running" && !step && !strings.Contains(line, "space step now") {
				t.Errorf("running, auto-play: %q", line)
			}
		}
	}
}

// TestNoReplicasNoReplicaKeys: flapping-link starts no replicas (its
// etcd members are the story), so its screen offers no fault keys (the
// header said "add yours: tab picks a replica", the help "tab replica ·
// p pause", and they acted on nothing) and no TTL (no lease); a
// scenario with replicas still offers both.
func TestNoReplicasNoReplicaKeys(t *testing.T) {
	helps := func(m *Model) string {
		var out []string
		for _, b := range m.ShortHelp() {
			out = append(out, b.Help().Key+" "+b.Help().Desc)
		}
		for _, col := range m.FullHelp() {
			for _, b := range col {
				out = append(out, b.Help().Key+" "+b.Help().Desc)
			}
		}
		return strings.Join(out, "; ")
	}
	m := newModel(t, "flapping-link", false, 200, 60)
	v, h := view(m), helps(m)
	if strings.Contains(v, "add yours") || strings.Contains(v, "TTL") {
		t.Fatalf("flapping-link offers fault keys or a TTL:\n%s", v)
	}
	for _, k := range []string{"replica", "pause", "TTL", "crash"} {
		if strings.Contains(h, k) {
			t.Fatalf("flapping-link's help offers %q: %s", k, h)
		}
	}
	press(m, "+")
	if m.params.TTL != m.sc.DefaultTTL {
		t.Fatalf("+ changed flapping-link's TTL to %d", m.params.TTL)
	}
	m.phase = phaseRunning
	if h := helps(m); strings.Contains(h, "tab replica") || strings.Contains(h, "p pause") {
		t.Fatalf("a running flapping-link offers fault keys: %s", h)
	}
	f := newModel(t, "fencing", false, 200, 60)
	if v, h := view(f), helps(f); !strings.Contains(v, "add yours") || !strings.Contains(h, "TTL") || !strings.Contains(h, "pause") {
		t.Fatalf("fencing should still offer its fault keys and TTL:\n%s\n%s", v, h)
	}
}
