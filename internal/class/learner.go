package class

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd/access"
)

// Learner-side messages, for the status line of a learner's playground:
// what stops their progress reaching the board, and what to do.
// Each reads "class: WHAT: what to do" and fits a status line at 80
// columns; the password may have been
// changed or the learner removed, and either way only the instructor can
// mend it. Progress stays saved on the learner's machine meanwhile.
const (
	LoginRefused = "class: login refused: ask your instructor for a new settings file"
	ClusterFull  = "class: cluster full (NOSPACE): ask your instructor to run class repair"
)

// LearnerProblem turns an error a learner's client met into the status
// line's words, or "" when the error is not one the learner must hear of
// (a cluster briefly away is retried without fuss).
func LearnerProblem(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	has := func(e error) bool { return errors.Is(err, e) || strings.Contains(msg, e.Error()) }
	switch {
	case errors.Is(err, access.ErrWrongPassword) || errors.Is(err, access.ErrNeedsUser) ||
		has(rpctypes.ErrAuthFailed) || has(rpctypes.ErrInvalidAuthToken) || has(rpctypes.ErrUserNotFound) ||
		has(rpctypes.ErrPermissionDenied) || has(rpctypes.ErrUserEmpty):
		return LoginRefused
	case has(rpctypes.ErrNoSpace):
		return ClusterFull
	}
	return ""
}

// CheckEvery is how often a learner's playground checks, while nothing
// else is sent, that the cluster still takes its login: a password
// changed or a learner removed shows within this and a request's time.
const CheckEvery = 4 * time.Second

// CheckLogin makes one small request as the learner (a read of their own
// summary key, through kv under their prefix) and says what it found.
func CheckLogin(ctx context.Context, kv clientv3.KV) string {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	_, err := kv.Get(ctx, SummaryKey, clientv3.WithCountOnly())
	return LearnerProblem(err)
}
