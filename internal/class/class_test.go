package class_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/testwait"
)

func startClass(t *testing.T, members int) *classtest.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// etcd's default ticks: a class cluster is not tuned for fast failover,
	// and a loaded test machine must not see spurious elections.
	c, err := classtest.Start(ctx, t.TempDir(), members, true, embedetcd.WithTicks(embedetcd.DefaultTicks))
	if err != nil {
		t.Fatalf("start TLS cluster with auth: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func rootClient(t *testing.T, c *classtest.Cluster) *clientv3.Client {
	t.Helper()
	cli, err := c.Root.New(nil)
	if err != nil {
		t.Fatalf("connect as root: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func learnerSettings(c *classtest.Cluster, a class.Action) access.Settings {
	s := c.Plain
	s.User, s.Password = a.Learner, a.Password
	return s
}

// TestClassOfThirty is the class on a real cluster: 3 members over TLS
// with auth, 30 learners set up, all of them working and publishing at
// once, one member stopped and restarted in the middle, some learners
// restarting their playground from an older progress file. At the end the
// board (read fresh, and as kept live by its watch) shows every learner
// with exactly what they did.
func TestClassOfThirty(t *testing.T) {
	c := startClass(t, 3)
	root := rootClient(t, c)
	// A bound on a hang, not on speed: the whole class took 108 s of
	// the 2 minutes this once was, alone under -race beside two busy
	// loops; what the test checks is what the board shows at the end.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	var learners []class.Learner
	for i := range 30 {
		learners = append(learners, class.Learner{Name: fmt.Sprintf("learner%02d", i)})
	}
	actions, err := class.Setup(ctx, c.Root, root, learners, nil)
	if err != nil {
		t.Fatalf("class setup: %v", err)
	}
	known := map[string]string{}
	for _, a := range actions {
		if a.PasswordUnknown || a.Password == "" || len(a.Changes) == 0 {
			t.Fatalf("setup of %s: %+v", a.Learner, a)
		}
		known[a.Learner] = a.Password
	}
	again, err := class.Setup(ctx, c.Root, root, learners, known)
	if err != nil {
		t.Fatalf("class setup, second run: %v", err)
	}
	for _, a := range again {
		if len(a.Changes) > 0 {
			t.Errorf("second setup changed %s: %v (want no change)", a.Learner, a.Changes)
		}
	}

	board, err := class.LoadBoard(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(board.Learners()); n != 30 {
		t.Fatalf("board before anyone published: %d learners, want 30", n)
	}
	wctx, wcancel := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() { watchDone <- board.Watch(wctx, root, nil) }()

	labs := []string{"01_cas", "02_lock", "03_lease", "04_fencing"}
	const rounds = 8
	var wg sync.WaitGroup
	halfway := make(chan struct{}, 30)
	stopped := make(chan struct{})
	errs := make(chan error, 30)
	for i, a := range actions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- simulateLearner(ctx, learnerSettings(c, a), i, rounds, labs, halfway, stopped)
		}()
	}
	// Once every learner is halfway, crash a member; the second half of
	// the work starts while it is down, and it comes back during it.
	crash := make(chan struct{})
	go func() {
		defer close(crash)
		for range 30 {
			<-halfway
		}
		if err := c.Members()[1].Stop(); err != nil {
			t.Errorf("stop member: %v", err)
		}
		close(stopped)
		time.Sleep(200 * time.Millisecond)
		if err := c.Members()[1].Restart(ctx); err != nil {
			t.Errorf("restart member: %v", err)
		}
	}()
	wg.Wait()
	<-crash
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

	fresh, err := class.LoadBoard(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	// The watching board must converge to the same state.
	if !testwait.For(5*time.Second, func() bool { return compareBoards(fresh, board) == "" }) {
		t.Errorf("the watched board differs from a fresh read: %s", compareBoards(fresh, board))
	}
	wcancel()
	<-watchDone

	for i, s := range fresh.Snapshot() {
		want := expectedSummary(i, rounds, labs)
		if got := len(s.Labs); got != len(want.Labs) {
			t.Errorf("%s: %d labs passed on the board, want %d (%v)", s.Learner, got, len(want.Labs), s.Labs)
		}
		for id, wl := range want.Lessons {
			if gl := s.Lessons[id]; fmt.Sprint(gl) != fmt.Sprint(wl) {
				t.Errorf("%s lesson %s: board has %+v, want %+v", s.Learner, id, gl, wl)
			}
		}
	}
	var buf strings.Builder
	course := class.Course{Lessons: []class.CourseLesson{{ID: "l1", Pages: rounds}, {ID: "l2", Pages: rounds}}, Labs: labs}
	if err := class.WriteJSON(&buf, course, class.Rows(course, fresh.Snapshot(), time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"published": true`); n != 30 {
		t.Errorf("class status JSON lists %d learners, want 30", n)
	}
}

// openOnce logs a learner in and starts their publisher.
func openOnce(ctx context.Context, s access.Settings) (*embedetcd.Remote, *class.Publisher, error) {
	// Learners arrive a few at a time, as in a room.
	logins <- struct{}{}
	defer func() { <-logins }()
	r, err := embedetcd.Connect(ctx, s, class.Prefix(s.User), embedetcd.WithLogger(zap.NewNop()))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: connect: %w", s.User, err)
	}
	cli, err := r.Client()
	if err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("%s: client: %w", s.User, err)
	}
	return r, class.NewPublisher(cli.KV).Start(), nil
}

// logins bounds how many simulated learners log in at the same moment.
var logins = make(chan struct{}, 4)

// simulateLearner reads pages, finishes quizzes and passes labs over
// rounds, publishing after each; learners with an even index restart
// their playground halfway from a progress snapshot taken earlier.
func simulateLearner(ctx context.Context, s access.Settings, idx, rounds int, labs []string, halfway chan<- struct{}, stopped <-chan struct{}) error {
	// A playground that cannot log in tries again, as the terminal
	// interface's publisher does: a login is a raft proposal plus a TLS
	// handshake with each member, slow on a loaded machine under -race.
	open := func() (r *embedetcd.Remote, pub *class.Publisher, err error) {
		for attempt := range 5 {
			if r, pub, err = openOnce(ctx, s); err == nil {
				return r, pub, nil
			}
			time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
		}
		return nil, nil, err
	}
	// A learner that fails early still counts as halfway, so the others
	// are not left waiting for it.
	reached := false
	defer func() {
		if !reached {
			halfway <- struct{}{}
		}
	}()
	r, pub, err := open()
	if err != nil {
		return err
	}
	p := progress.New()
	var stale *progress.Progress
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for round := range rounds {
		now = now.Add(time.Minute)
		p.MarkPageRead("l1", round, now)
		p.MarkPageRead("l2", round, now)
		if round == 2 {
			stale = p.Clone()
		}
		if round == rounds/2 {
			pub.Offer(class.FromProgress(s.User, p))
			reached = true
			halfway <- struct{}{}
			<-stopped
			if idx%2 == 0 {
				pub.Close(5 * time.Second)
				r.Close()
				if r, pub, err = open(); err != nil {
					return fmt.Errorf("%s: reopen: %w", s.User, err)
				}
				p = stale // the restarted playground read an older file
			}
		}
		if round%2 == 1 {
			p.RecordQuiz("l1", progress.QuizResult{QuizID: "l1", Score: float64(round), Total: rounds, Finished: now})
		}
		if lab := labs[round%len(labs)]; (round+idx)%3 != 0 {
			p.RecordLabPassed("l1", lab, now)
		}
		pub.Offer(class.FromProgress(s.User, p))
	}
	pub.Close(20 * time.Second)
	r.Close()
	if err := pub.Err(); err != nil {
		return fmt.Errorf("%s: last publication failed: %w", s.User, err)
	}
	return nil
}

// expectedSummary is what simulateLearner publishes in total.
func expectedSummary(idx, rounds int, labs []string) class.Summary {
	s := class.Summary{Lessons: map[string]class.LessonSummary{}, Labs: map[string]class.LabSummary{}}
	best := 0.0
	for round := range rounds {
		if round%2 == 1 {
			best = max(best, float64(round)/float64(rounds))
		}
		if (round+idx)%3 != 0 {
			s.Labs[labs[round%len(labs)]] = class.LabSummary{}
		}
	}
	var all []int
	for p := range rounds {
		all = append(all, p)
	}
	s.Lessons["l1"] = class.LessonSummary{Read: all, QuizTaken: true, QuizBest: best}
	s.Lessons["l2"] = class.LessonSummary{Read: all}
	return s
}

func compareBoards(a, b *class.Board) string {
	as, bs := a.Snapshot(), b.Snapshot()
	if len(as) != len(bs) {
		return fmt.Sprintf("%d vs %d learners", len(as), len(bs))
	}
	for i := range as {
		if fmt.Sprint(as[i].Lessons, as[i].Labs) != fmt.Sprint(bs[i].Lessons, bs[i].Labs) {
			return fmt.Sprintf("%s: %v %v vs %v %v", as[i].Learner, as[i].Lessons, as[i].Labs, bs[i].Lessons, bs[i].Labs)
		}
	}
	return ""
}

// TestLearnersStayInTheirLane: with their own credentials, learner A gets
// "permission denied" on B's prefix for reads, writes, deletes, watches
// and operations on the lease B's key is attached to, while A's own
// prefix works.
func TestLearnersStayInTheirLane(t *testing.T) {
	c := startClass(t, 1)
	root := rootClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}, {Name: "bob", Password: "bobs-password"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := learnerSettings(c, actions[0]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := learnerSettings(c, actions[1]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if actions[1].Password != "bobs-password" {
		t.Errorf("bob's password from the file was not used: %q", actions[1].Password)
	}

	own := class.Prefix("ada") + "lock"
	if _, err := a.Put(ctx, own, "ada"); err != nil {
		t.Fatalf("ada writing under her own prefix: %v", err)
	}
	bobKey := class.Prefix("bob") + "lock"
	lease, err := b.Grant(ctx, 30)
	if err != nil {
		t.Fatalf("bob grants a lease: %v", err)
	}
	if _, err := b.Put(ctx, bobKey, "bob", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatalf("bob writes his key: %v", err)
	}

	denied := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("ada %s on bob's prefix: got %v, want permission denied", what, err)
		}
	}
	_, err = a.Get(ctx, bobKey)
	denied("reading", err)
	_, err = a.Put(ctx, bobKey, "ada")
	denied("writing", err)
	_, err = a.Delete(ctx, class.Prefix("bob"), clientv3.WithPrefix())
	denied("deleting", err)
	_, err = a.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(bobKey), "=", 0)).Then(clientv3.OpPut(bobKey, "ada")).Commit()
	denied("a transaction", err)
	_, err = a.Revoke(ctx, lease.ID)
	denied("revoking the lease of", err)
	_, err = a.KeepAliveOnce(ctx, lease.ID)
	denied("renewing the lease of", err)
	_, err = a.TimeToLive(ctx, lease.ID, clientv3.WithAttachedKeys())
	denied("reading the lease of", err)
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	wresp := <-a.Watch(wctx, bobKey)
	denied("watching", wresp.Err())
	_, err = a.Get(ctx, class.RosterPrefix, clientv3.WithPrefix())
	denied("reading the roster next to", err)

	g, err := b.Get(ctx, bobKey)
	if err != nil || len(g.Kvs) != 1 || string(g.Kvs[0].Value) != "bob" {
		t.Errorf("bob's key after ada's attempts: %v %v", g, err)
	}
	// Explain turns the denial into a line about the learner's lane.
	_, err = a.Get(ctx, bobKey)
	s := learnerSettings(c, actions[0])
	if e := s.Explain(err); !errors.Is(e, access.ErrPermission) || !strings.Contains(e.Error(), `"ada"`) {
		t.Errorf("explained denial: %v", e)
	}
}

func TestSetupRefusesWithoutAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := classtest.Start(ctx, t.TempDir(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli, err := c.Plain.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := class.Setup(ctx, c.Plain, cli, []class.Learner{{Name: "ada"}}, nil); !errors.Is(err, class.ErrAuthDisabled) {
		t.Fatalf("setup without auth: %v, want ErrAuthDisabled", err)
	}
	if r, _ := cli.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithCountOnly()); r != nil && r.Count != 0 {
		t.Errorf("setup without auth wrote %d keys", r.Count)
	}
}

func TestRemoveTakesEverythingAway(t *testing.T) {
	c := startClass(t, 1)
	root := rootClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := learnerSettings(c, actions[0]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Put(ctx, class.Prefix("ada")+"x", "1")
	a.Close()
	gone, err := class.Remove(ctx, root, []string{"ada"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone[0].Changes) != 4 {
		t.Errorf("remove: %v, want user, role, roster and keys gone", gone[0].Changes)
	}
	if _, err := learnerSettings(c, actions[0]).New(nil); !errors.Is(err, access.ErrWrongPassword) {
		t.Errorf("ada logging in after remove: %v, want a wrong-password error", err)
	}
	again, err := class.Remove(ctx, root, []string{"ada"}, true)
	if err != nil || len(again[0].Changes) != 0 {
		t.Errorf("second remove: %v %v, want no change", again, err)
	}
	if names, _ := class.Roster(ctx, root); len(names) != 0 {
		t.Errorf("roster after remove: %v", names)
	}
}
