package class

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/embedetcd/prefix"
	"github.com/ownership-election/playground/internal/sanitize"
)

// RosterPrefix holds one key per learner set up, readable only by root:
// it is how the instructor's board knows whom to show.
const RosterPrefix = "/playground-class/learners/"

// SummaryKey is where, under a learner's prefix, their summary lives.
const SummaryKey = "class/summary"

// ErrAuthDisabled is returned by Setup on a cluster without
// authentication: roles would not keep anyone in their lane.
var ErrAuthDisabled = errors.New("class: authentication is not enabled on this cluster")

// EnableAuthHelp says how to turn authentication on with etcdctl.
const EnableAuthHelp = `Enable it once, as the cluster's administrator:
  etcdctl user add root            # choose the root password
  etcdctl user grant-role root root
  etcdctl auth enable
then run this again with --user root (docs/class.md walks through it).`

// RoleName is the etcd role that gives learner name their prefix.
func RoleName(name string) string { return "playground-" + name }

// Prefix is the key prefix of learner name.
func Prefix(name string) string { return prefix.For(name) }

// Action is what Setup or Remove did for one learner.
type Action struct {
	Learner  string
	Password string   // the learner's password when known (new, or given)
	Changes  []string // e.g. "user created", "role granted"; empty when nothing changed
	// PasswordUnknown: the user existed before and no password was given,
	// so no settings can be written for it.
	PasswordUnknown bool
}

// Setup makes sure every learner has a user, a role with read-write access
// to their prefix and nothing else, and a roster entry. It needs a client
// authenticated as root. Running it again changes nothing: existing users
// keep their passwords (known[name] tells Setup a password handed out
// before, so settings can be written again).
//
// rootSettings is how root reaches the cluster; Setup uses it to find out
// whether authentication is on on etcd releases older than 3.5, which
// cannot say so directly.
func Setup(ctx context.Context, rootSettings access.Settings, root *clientv3.Client, learners []Learner, known map[string]string) ([]Action, error) {
	on, err := authEnabled(ctx, rootSettings, root)
	if err != nil {
		return nil, fmt.Errorf("class setup: %w", err)
	}
	if !on {
		return nil, ErrAuthDisabled
	}
	out := make([]Action, 0, len(learners))
	for _, l := range learners {
		a, err := setupOne(ctx, rootSettings, root, l, known[l.Name])
		if err != nil {
			return out, fmt.Errorf("class setup %s: %w", l.Name, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func setupOne(ctx context.Context, rootSettings access.Settings, root *clientv3.Client, l Learner, known string) (Action, error) {
	a := Action{Learner: l.Name}
	role := RoleName(l.Name)
	user, err := root.UserGet(ctx, l.Name)
	switch {
	case errors.Is(err, rpctypes.ErrUserNotFound):
		a.Password = l.Password
		if a.Password == "" {
			a.Password = GeneratePassword()
		}
		if _, err := root.UserAdd(ctx, l.Name, a.Password); err != nil {
			return a, fmt.Errorf("add user: %w", err)
		}
		a.Changes = append(a.Changes, "user created")
	case err != nil:
		return a, fmt.Errorf("read user: %w", err)
	default:
		a.Password = l.Password
		if a.Password == "" {
			a.Password = known
		}
		a.PasswordUnknown = a.Password == ""
		if l.Password != "" {
			set, err := setPassword(ctx, rootSettings, root, l)
			if err != nil {
				return a, err
			}
			if set {
				a.Changes = append(a.Changes, "password set")
			}
		}
	}

	perms, err := root.RoleGet(ctx, role)
	switch {
	case errors.Is(err, rpctypes.ErrRoleNotFound):
		if _, err := root.RoleAdd(ctx, role); err != nil {
			return a, fmt.Errorf("add role: %w", err)
		}
		a.Changes = append(a.Changes, "role created")
	case err != nil:
		return a, fmt.Errorf("read role: %w", err)
	}
	p := Prefix(l.Name)
	end := clientv3.GetPrefixRangeEnd(p)
	if perms == nil || !hasPermission(perms.Perm, p, end) {
		if _, err := root.RoleGrantPermission(ctx, role, p, end, clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
			return a, fmt.Errorf("grant %s to role: %w", p, err)
		}
		a.Changes = append(a.Changes, "read-write on "+p)
	}
	if user == nil || !contains(user.Roles, role) {
		if _, err := root.UserGrantRole(ctx, l.Name, role); err != nil {
			return a, fmt.Errorf("grant role: %w", err)
		}
		a.Changes = append(a.Changes, "role granted")
	}
	rk := RosterPrefix + l.Name
	txn, err := root.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(rk), "=", 0)).
		Then(clientv3.OpPut(rk, l.Name)).Commit()
	if err != nil {
		return a, fmt.Errorf("add to roster: %w", err)
	}
	if txn.Succeeded {
		a.Changes = append(a.Changes, "added to roster")
	}
	return a, nil
}

// setPassword makes the password the learners file gives for an existing
// user the one that works, so the settings written with it log in. It
// first tries to log in with it, so running setup again changes nothing.
func setPassword(ctx context.Context, rootSettings access.Settings, root *clientv3.Client, l Learner) (bool, error) {
	s := rootSettings
	s.User, s.Password = l.Name, l.Password
	cli, err := s.New(nil)
	if err == nil {
		cli.Close()
		return false, nil
	}
	if !errors.Is(err, access.ErrWrongPassword) {
		return false, fmt.Errorf("check the password the learners file gives: %w", err)
	}
	if _, err := root.UserChangePassword(ctx, l.Name, l.Password); err != nil {
		return false, fmt.Errorf("set the password the learners file gives: %w", err)
	}
	return true, nil
}

// authEnabled asks the cluster whether authentication is on. etcd 3.4
// has no AuthStatus call; there, a client without a user tries to list
// users, which only works while authentication is off.
func authEnabled(ctx context.Context, s access.Settings, root *clientv3.Client) (bool, error) {
	st, err := root.AuthStatus(ctx)
	if err == nil {
		return st.Enabled, nil
	}
	if status.Code(err) != codes.Unimplemented {
		return false, fmt.Errorf("read auth status: %w", err)
	}
	anon := s
	anon.User, anon.Password = "", ""
	cli, err := anon.New(nil)
	if err != nil {
		return false, fmt.Errorf("read auth status: %w", err)
	}
	defer cli.Close()
	_, err = cli.UserList(ctx)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, rpctypes.ErrUserEmpty) || errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrInvalidAuthToken):
		return true, nil
	}
	return false, fmt.Errorf("read auth status: %w", err)
}

func hasPermission(perms []*authpb.Permission, key, end string) bool {
	for _, p := range perms {
		if p.PermType == authpb.READWRITE && string(p.Key) == key && string(p.RangeEnd) == end {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Remove takes learners' users, roles and roster entries away again; with
// purge it also deletes every key under their prefixes. Learners that are
// already gone are skipped, so it can be run again.
func Remove(ctx context.Context, root *clientv3.Client, names []string, purge bool) ([]Action, error) {
	out := make([]Action, 0, len(names))
	for _, name := range names {
		a := Action{Learner: name}
		if _, err := root.UserDelete(ctx, name); err == nil {
			a.Changes = append(a.Changes, "user deleted")
		} else if !errors.Is(err, rpctypes.ErrUserNotFound) {
			return out, fmt.Errorf("class remove %s: delete user: %w", name, err)
		}
		if _, err := root.RoleDelete(ctx, RoleName(name)); err == nil {
			a.Changes = append(a.Changes, "role deleted")
		} else if !errors.Is(err, rpctypes.ErrRoleNotFound) {
			return out, fmt.Errorf("class remove %s: delete role: %w", name, err)
		}
		if r, err := root.Delete(ctx, RosterPrefix+name); err != nil {
			return out, fmt.Errorf("class remove %s: roster: %w", name, err)
		} else if r.Deleted > 0 {
			a.Changes = append(a.Changes, "removed from roster")
		}
		if purge {
			r, err := root.Delete(ctx, Prefix(name), clientv3.WithPrefix())
			if err != nil {
				return out, fmt.Errorf("class remove %s: delete keys: %w", name, err)
			}
			if r.Deleted > 0 {
				a.Changes = append(a.Changes, fmt.Sprintf("%d keys deleted", r.Deleted))
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// Roster lists the learners set up on the cluster, sorted by name.
func Roster(ctx context.Context, root *clientv3.Client) ([]string, error) {
	r, err := root.Get(ctx, RosterPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("read the class roster: %w", err)
	}
	names := make([]string, 0, len(r.Kvs))
	for _, kv := range r.Kvs {
		names = append(names, sanitize.Line(strings.TrimPrefix(string(kv.Key), RosterPrefix)))
	}
	return names, nil
}

// EnableAuth does what an administrator does once on a fresh cluster:
// creates root with the given password, gives it the root role and turns
// authentication on. cli needs no user yet.
func EnableAuth(ctx context.Context, cli *clientv3.Client, rootPassword string) error {
	if _, err := cli.UserAdd(ctx, "root", rootPassword); err != nil {
		return fmt.Errorf("enable auth: add root: %w", err)
	}
	if _, err := cli.UserGrantRole(ctx, "root", "root"); err != nil {
		return fmt.Errorf("enable auth: grant root: %w", err)
	}
	if _, err := cli.AuthEnable(ctx); err != nil {
		return fmt.Errorf("enable auth: %w", err)
	}
	return nil
}
