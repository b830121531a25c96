package experiment

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ownership-election/playground/embedetcd"
)

// The engine's tests share one server and one 3-member cluster, as the
// scenarios' tests do (internal/experiment/scenario).

var (
	shared struct {
		once    sync.Once
		srv     *embedetcd.Server
		cluster *embedetcd.Cluster
		err     error
	}
)

// etcds starts one server and one 3-member cluster for the whole package.
func etcds(t *testing.T) (*embedetcd.Server, *embedetcd.Cluster) {
	t.Helper()
	shared.once.Do(func() {
		log := embedetcd.WithLogFile(filepath.Join(os.TempDir(), "playground-experiment-test-etcd.log"))
		shared.srv, shared.err = embedetcd.Start(context.Background(), log)
		if shared.err != nil {
			return
		}
		shared.cluster, shared.err = embedetcd.StartCluster(context.Background(), 3, log)
	})
	if shared.err != nil {
		t.Fatalf("start etcd: %v", shared.err)
	}
	return shared.srv, shared.cluster
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		shared.cluster.Close()
	}
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}
