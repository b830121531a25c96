package class_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/testwait"
)

// TestBoardSurvivesTheCluster: the leader member is stopped under a
// watching board; what a learner publishes afterwards still reaches it.
// A value that is not a summary shows as unreadable (not as the learner's
// older values), and a removed learner leaves the board.
func TestBoardSurvivesTheCluster(t *testing.T) {
	c := startClass(t, 3)
	root := rootClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}, {Name: "bob"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	board, err := class.LoadBoard(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- board.Watch(wctx, root, nil) }()
	defer func() {
		wcancel()
		if err := <-done; err != nil {
			t.Errorf("Watch returned %v when its context ended, want nil", err)
		}
	}()

	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Members()[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	r, err := embedetcd.Connect(ctx, learnerSettings(c, actions[0]), class.Prefix("ada"), embedetcd.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ada, err := r.Client()
	if err != nil {
		t.Fatal(err)
	}
	p := progress.New()
	p.MarkPageRead("l1", 0, time.Now())
	if err := class.NewPublisher(ada.KV).Publish(ctx, class.FromProgress("ada", p)); err != nil {
		t.Fatalf("ada publishing with the leader member stopped: %v", err)
	}
	testwait.Until(t, 30*time.Second, "ada's summary, published after the leader member stopped, to reach the board", func() bool {
		s, ok := board.Summary("ada")
		return ok && len(s.Lessons["l1"].Read) == 1
	})
	if err := c.Members()[leader].Restart(ctx); err != nil {
		t.Fatal(err)
	}

	if _, err := root.Put(ctx, class.Prefix("bob")+class.SummaryKey, "{not a summary"); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 15*time.Second, "bob's unreadable summary to show as unreadable", func() bool {
		s, ok := board.Summary("bob")
		return ok && strings.Contains(s.Unreadable, "decode")
	})
	if _, err := class.Remove(ctx, root, []string{"bob"}, true); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 15*time.Second, "bob, removed, to leave the board", func() bool {
		_, ok := board.Summary("bob")
		return !ok && len(board.Learners()) == 1
	})
}

// TestBoardSaysWhenTheClusterIsGone: with the only member stopped the
// board stops saying it is live within a probe or two, and says so again
// once the member is back.
func TestBoardSaysWhenTheClusterIsGone(t *testing.T) {
	c := startClass(t, 1)
	root := rootClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	board, err := class.LoadBoard(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- board.Watch(wctx, root, nil) }()
	defer func() { wcancel(); <-done }()
	testwait.Until(t, 10*time.Second, "the board to say it is live", func() bool { return board.State().Live })
	if err := c.Members()[0].Stop(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 15*time.Second, "the board to stop saying it is live once the only member stopped", func() bool {
		st := board.State()
		return !st.Live && st.Reason != ""
	})
	if err := c.Members()[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the board to be live again after the member restarted", func() bool { return board.State().Live })
}
