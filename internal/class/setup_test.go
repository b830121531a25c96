package class_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
)

// TestSetupSetsAGivenPassword: a password the learners file gives for a
// user that exists already is set (it was reported as "no change" and
// written into a handout that then failed to log in), and only once.
func TestSetupSetsAGivenPassword(t *testing.T) {
	c := startClass(t, 1)
	root := rootClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}}, nil); err != nil {
		t.Fatal(err)
	}
	given := []class.Learner{{Name: "ada", Password: "a-new-password"}}
	again, err := class.Setup(ctx, c.Root, root, given, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(again[0].Changes, "password set") || again[0].Password != "a-new-password" {
		t.Errorf("setup with a new password for ada: %+v, want the password set", again[0])
	}
	cli, err := learnerSettings(c, again[0]).New(nil)
	if err != nil {
		t.Fatalf("ada logging in with the password the handout carries: %v", err)
	}
	cli.Close()
	third, err := class.Setup(ctx, c.Root, root, given, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(third[0].Changes) != 0 {
		t.Errorf("a third setup with the same password changed %v, want nothing", third[0].Changes)
	}
}

// TestCheckServerReadsTheClusterSettings: a cluster started like
// docs/class.md says passes the check quietly; one on etcd's default
// quota gets a warning with the flag that fixes it.
func TestCheckServerReadsTheClusterSettings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []embedetcd.Option
		wantQuota bool
	}{
		{"default quota", nil, true},
		{"class quota", []embedetcd.Option{embedetcd.WithQuota(4 << 30), embedetcd.WithAutoCompaction(time.Hour)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := classtest.Start(ctx, t.TempDir(), 1, true, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			root := rootClient(t, c)
			srv, err := class.CheckServer(ctx, c.Root, root, false)
			if err != nil {
				t.Fatalf("check of etcd %s: %v", srv.Version, err)
			}
			w := strings.Join(srv.Warnings, "\n")
			if got := strings.Contains(w, "--quota-backend-bytes"); got != tc.wantQuota {
				t.Errorf("etcd %s, %s: warnings %q; want a quota warning: %v", srv.Version, tc.name, w, tc.wantQuota)
			}
			if strings.Contains(w, "could not read") {
				t.Errorf("the metrics could not be read: %s", w)
			}
		})
	}
}
