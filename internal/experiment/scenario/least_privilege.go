package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// leastPrivilegeScenario is the scenario least-privilege.
var leastPrivilegeScenario = &experiment.Scenario{
	Name:            "least-privilege",
	Title:           "Least privilege: a role per key prefix",
	Summary:         "etcd authentication is turned on, and a shard worker gets a role that covers only stream/shards/. It writes one of its shards, then (a bug) tries to delete another component's leader key.",
	Faults:          "a buggy worker reaches outside its prefix",
	NeedsOwnServer:  true,
	DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 1,
	DefaultTTL:   1,
	Run:          runLeastPrivilege,
	Predict:      leastPrivilegeQuestion,
	Shows:        []history.Property{{Name: "denied-outside", Check: deniedOutside}},
	RunAsLearner: runLeastPrivilegeAsLearner,
}

func runLeastPrivilege(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	v := history.Verdict{Figures: map[string]float64{}}
	admin := run.Admin()
	shardPrefix := run.Namespace() + "stream/shards/"
	if err := run.Phase(ctx, "as root: role shard-worker may read and write stream/shards/ only; user worker-7 gets that role; then auth is enabled"); err != nil {
		return v, err
	}
	if _, err := admin.Put(ctx, "migrations/leader", "migrator-1"); err != nil {
		return v, fmt.Errorf("write migrations/leader as root: %w", err)
	}
	steps := []func() error{
		func() error { _, err := admin.RoleAdd(ctx, "root"); return err },
		func() error { _, err := admin.UserAdd(ctx, "root", "root-secret"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "shard-worker"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "shard-worker", shardPrefix,
				clientv3.GetPrefixRangeEnd(shardPrefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "worker-7", "worker-secret"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "worker-7", "shard-worker"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	}
	for _, step := range steps {
		if err := experiment.RetryTransient(ctx, func(context.Context) error { return step() }); err != nil {
			return v, fmt.Errorf("configure auth: %w", err)
		}
	}
	run.Note("auth enabled; migrations/leader = migrator-1 belongs to another component")

	worker, err := dialAs(run, "worker-7", "worker-secret")
	if err != nil {
		return v, err
	}
	defer worker.Close()
	root, err := dialAs(run, "root", "root-secret")
	if err != nil {
		return v, err
	}
	// With auth on, the run's admin client is refused; the store's view
	// reads as root, until the run ends.
	run.ReadStoreAs(root)
	run.OnClose(func() { root.Close() })

	if err := run.Phase(ctx, "as worker-7: write its own shard, then (a bug) delete migrations/leader"); err != nil {
		return v, err
	}
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, putErr := worker.Put(tctx, "stream/shards/07", "worker-7")
	run.Emit(callEvent("worker-7", "put", "stream/shards/07", putErr))
	_, delErr := worker.Delete(tctx, "migrations/leader")
	run.Emit(callEvent("worker-7", "delete", "migrations/leader", delErr))
	_, getErr := worker.Get(tctx, "migrations/leader")
	run.Emit(callEvent("worker-7", "get", "migrations/leader", getErr))

	g, err := root.Get(tctx, "migrations/leader")
	if err != nil {
		return v, fmt.Errorf("read as root: %w", err)
	}
	f := &history.Facts{Op: "get", Key: "migrations/leader", Revision: g.Header.Revision, Succeeded: true}
	text := "as root: etcd holds no migrations/leader"
	if len(g.Kvs) > 0 {
		kv := experiment.StoreKeyOf(g.Kvs[0])
		f.Held = &kv
		text = fmt.Sprintf("as root: migrations/leader = %s (version %d)", kv.Value, kv.Version)
	}
	run.Emit(history.Event{Kind: history.Note, Facts: f, Text: text})
	return v, nil
}

// callEvent is a worker's call and etcd's answer, as an event.
func callEvent(who, op, key string, err error) history.Event {
	return history.Event{Kind: history.Note, Replica: who, Text: fmt.Sprintf("%s %s: %s", op, key, outcome(err)),
		Facts: &history.Facts{Op: op, Key: key, Succeeded: err == nil, Err: errText(err, "")}}
}

// deniedOutside: the worker wrote inside its prefix, was refused outside
// it, and the other component's key is intact.
func deniedOutside(f *history.Findings) (bool, string) {
	call := func(op, key string) (*history.Facts, bool) {
		e, ok := f.FirstEvent(func(e history.Event) bool {
			return e.Facts != nil && e.Replica == "worker-7" && e.Facts.Op == op && e.Facts.Key == key
		})
		return e.Facts, ok
	}
	put, ok1 := call("put", "stream/shards/07")
	del, ok2 := call("delete", "migrations/leader")
	read, ok3 := f.LastEvent(func(e history.Event) bool {
		return e.Kind == history.Note && e.Facts != nil && e.Replica == "" && e.Facts.Key == "migrations/leader"
	})
	if !ok1 || !ok2 || !ok3 {
		return false, "worker-7 never tried both writes"
	}
	denied := !del.Succeeded && strings.Contains(del.Err, "permission denied")
	intact := read.Facts.Held != nil && read.Facts.Held.Value == "migrator-1"
	say := fmt.Sprintf("worker-7 wrote its shard (%s); deleting migrations/leader got %q; %s", okOr(put), okOr(del), read.Text)
	return put.Succeeded && denied && intact, say
}

func okOr(f *history.Facts) string {
	if f.Succeeded {
		return "ok"
	}
	return outcome(errors.New(f.Err))
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "etcdserver: "); i >= 0 {
		msg = msg[i+len("etcdserver: "):]
	}
	return msg
}

// dialAs connects straight to etcd as user, under the run's key prefix.
func dialAs(run *experiment.Run, user, password string) (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: run.Etcd().Endpoints(), Username: user, Password: password,
		DialTimeout: 15 * time.Second, Logger: zap.NewNop(), // bcrypt is slow under -race
	})
	if err != nil {
		return nil, fmt.Errorf("connect as %s: %w", user, err)
	}
	run.InNamespace(cli)
	return cli, nil
}

// runLeastPrivilegeAsLearner is the same lesson on a class cluster, where
// the instructor already gave each learner a role that covers only their
// own prefix: the learner's worker writes inside it and is refused
// outside it.
func runLeastPrivilegeAsLearner(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	v := history.Verdict{Figures: map[string]float64{}}
	s := run.Access()
	own := embedetcd.LearnerPrefix(s)
	if err := run.Phase(ctx, fmt.Sprintf("as %s: your role covers %s only; write a shard inside it, then (a bug) reach outside it", s.User, own)); err != nil {
		return v, err
	}
	raw, err := s.New(zap.NewNop())
	if err != nil {
		return v, fmt.Errorf("connect as %s: %w", s.User, err)
	}
	defer raw.Close()
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, putErr := run.Admin().Put(tctx, "stream/shards/07", s.User)
	run.Emit(history.Event{Kind: history.Note, Replica: s.User, Text: "put stream/shards/07 (under " + own + "): " + outcome(putErr)})
	_, delErr := raw.Delete(tctx, "/migrations/leader")
	run.Emit(history.Event{Kind: history.Note, Replica: s.User, Text: "delete /migrations/leader (outside it): " + outcome(delErr)})
	_, readErr := raw.Get(tctx, "/playground/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	run.Emit(history.Event{Kind: history.Note, Replica: s.User, Text: "list every learner's keys under /playground/: " + outcome(readErr)})
	denied := func(err error) bool { return err != nil && strings.Contains(err.Error(), "permission denied") }
	v.Showed = putErr == nil && denied(delErr) && denied(readErr)
	v.Figures["own_prefix_write_ok"], v.Figures["outside_delete_denied"] = boolValue(putErr == nil), boolValue(denied(delErr))
	v.Summary = fmt.Sprintf("%s wrote inside %s (%s); deleting a key outside it got %q and listing other learners' keys got %q.", s.User, own, outcome(putErr), outcome(delErr), outcome(readErr))
	if !v.Showed {
		v.Summary = "Unexpected: " + v.Summary
	}
	return v, nil
}
