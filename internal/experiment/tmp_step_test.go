package experiment

import (
	"context"
	"testing"
	"time"
)

func TestTmpStepAll(t *testing.T) {
	srv, cluster := etcds(t)
	for _, sc := range Scenarios() {
		run, err := Start(context.Background(), sc.Name, Params{Step: true}, Env{Etcd: srv, Cluster: cluster}, nil)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				select {
				case <-run.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
				if run.AtStep() {
					time.Sleep(1500 * time.Millisecond)
					run.Step()
				}
			}
		}()
		v, err := run.Wait()
		t.Logf("%s: showed=%v err=%v %s", sc.Name, v.Showed, err, v.Summary)
	}
}
