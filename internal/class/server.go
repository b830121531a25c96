package class

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd/access"
)

// ErrOldEtcd is returned by CheckServer for a cluster older than 3.5
// when the instructor has not accepted what that means.
var ErrOldEtcd = errors.New("class: etcd older than 3.5 does not keep learners' leases apart")

// OldEtcdWarning says in plain words what a class on etcd 3.4 gives up.
const OldEtcdWarning = "on etcd %s any learner can list every lease, see the key names attached to a classmate's lease, keep it alive and revoke it (leases are not covered by roles before 3.5). Learners' keys stay apart; their leases do not."

// Server is what CheckServer found out about the cluster.
type Server struct {
	Version  string   // the lowest version among the members
	Warnings []string // settings a class should not run without, each with its fix
}

// quotaDefault is etcd's backend quota when none is set: 2 GiB.
const quotaDefault = 2 << 30

// CheckServer reads the cluster's version and the settings a shared class
// depends on. Below 3.5 it refuses with ErrOldEtcd unless allowOld, which
// turns the refusal into a warning. A cluster without a backend quota of
// its own or without automatic compaction is allowed with a warning: one
// learner writing large values fills the database, and then nobody can
// write (NOSPACE) until root repairs it.
func CheckServer(ctx context.Context, s access.Settings, root *clientv3.Client, allowOld bool) (Server, error) {
	var out Server
	lowest := [2]int{1 << 30, 0}
	for _, ep := range root.Endpoints() {
		st, err := root.Status(ctx, ep)
		if err != nil {
			return out, fmt.Errorf("class: read the version of %s: %w", ep, err)
		}
		var v [2]int
		if _, err := fmt.Sscanf(st.Version, "%d.%d", &v[0], &v[1]); err != nil {
			return out, fmt.Errorf("class: %s reports version %q: %w", ep, st.Version, err)
		}
		if v[0] < lowest[0] || (v[0] == lowest[0] && v[1] < lowest[1]) {
			lowest, out.Version = v, st.Version
		}
	}
	if lowest[0] < 3 || (lowest[0] == 3 && lowest[1] < 5) {
		if !allowOld {
			return out, fmt.Errorf("%w: %s", ErrOldEtcd, fmt.Sprintf(OldEtcdWarning, out.Version)+" Upgrade the cluster, or pass --allow-etcd-3.4 to run the class anyway.")
		}
		out.Warnings = append(out.Warnings, "warning: "+fmt.Sprintf(OldEtcdWarning, out.Version)+" Tell your learners.")
	}
	out.Warnings = append(out.Warnings, settingsWarnings(ctx, s, root)...)
	return out, nil
}

// settingsWarnings reads the members' metrics (served on the client port)
// for the backend quota and for any sign of compaction. etcd's API says
// nothing of either; when the metrics cannot be read, it says so.
func settingsWarnings(ctx context.Context, s access.Settings, root *clientv3.Client) []string {
	var warnings []string
	for _, ep := range root.Endpoints() {
		m, err := readMetrics(ctx, s, ep)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("could not read %s/metrics to check its quota and compaction (%v); see docs/class.md for the flags a class needs", ep, err))
			continue
		}
		if q, ok := m["etcd_server_quota_backend_bytes"]; ok && q <= quotaDefault {
			warnings = append(warnings, fmt.Sprintf("%s runs with a backend quota of %s: start it with --quota-backend-bytes (docs/class.md) so that one learner's writes cannot fill it for everyone", ep, bytesText(q)))
		}
		cur, compacted := m["etcd_debugging_mvcc_current_revision"], m["etcd_debugging_mvcc_compact_revision"]
		if cur > 10000 && compacted == 0 {
			warnings = append(warnings, fmt.Sprintf("%s has never compacted its history (revision %.0f): start it with --auto-compaction-mode=periodic --auto-compaction-retention=1h (docs/class.md)", ep, cur))
		}
	}
	return warnings
}

func bytesText(b float64) string {
	return fmt.Sprintf("%.1f GiB", b/(1<<30))
}

// readMetrics fetches a member's Prometheus metrics and returns the
// unlabelled gauges by name.
func readMetrics(ctx context.Context, s access.Settings, endpoint string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	client := &http.Client{}
	if s.TLS() {
		tc, err := s.TLSConfig()
		if err != nil {
			return nil, err
		}
		client.Transport = &http.Transport{TLSClientConfig: tc}
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = f
		}
	}
	return out, sc.Err()
}
