// Command classfill measures what one learner can do to a class cluster
// and how soon the others save again (issue 34): on an in-process TLS
// cluster with authentication, the class demo's request limit and a
// small quota, learner ada writes the largest values etcd takes as fast
// as she can until NOSPACE; bob's save is refused; the instructor removes
// ada and runs class repair (trim, compact, defragment, disarm); bob
// retries until his save is taken.
//
//	go run ./internal/tools/classfill [-quota-mib 64] [-budget-mib 1] [-writers 4]
//
// It prints the figures and exits 1 if bob never saves again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
)

// maxRequest is the class demo's --max-request-bytes (internal/cli's
// ClassMaxRequest; a tool may not import the CLI's constants' package
// without its whole weight, so it is repeated here).
const maxRequest = 256 << 10

func main() {
	quotaMiB := flag.Int64("quota-mib", 64, "the cluster's backend quota in MiB (the demo's is 4096)")
	budgetMiB := flag.Int64("budget-mib", 1, "the learners' budget in MiB (the default's 64 is for a 4 GiB quota)")
	writers := flag.Int("writers", 4, "ada's concurrent writers")
	flag.Parse()
	if err := run(*quotaMiB<<20, *budgetMiB<<20, *writers); err != nil {
		fmt.Fprintln(os.Stderr, "classfill:", err)
		os.Exit(1)
	}
}

func run(quota, budget int64, writers int) error {
	dir, err := os.MkdirTemp("", "classfill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := classtest.Start(ctx, dir, 1, true, embedetcd.WithQuota(quota), embedetcd.WithMaxRequestBytes(maxRequest))
	if err != nil {
		return err
	}
	defer c.Close()
	root, err := c.Root.New(nil)
	if err != nil {
		return err
	}
	defer root.Close()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}, {Name: "bob"}}, nil)
	if err != nil {
		return err
	}
	login := func(a class.Action) (*clientv3.Client, error) {
		s := c.Plain
		s.User, s.Password = a.Learner, a.Password
		return s.New(nil)
	}
	ada, err := login(actions[0])
	if err != nil {
		return err
	}
	defer ada.Close()
	bob, err := login(actions[1])
	if err != nil {
		return err
	}
	defer bob.Close()
	fmt.Printf("cluster: 1 member, TLS, auth, quota %d MiB, max request %d KiB\n", quota>>20, maxRequest>>10)
	if _, err := ada.Put(ctx, class.Prefix("ada")+"one-mb", strings.Repeat("x", 1<<20)); err != nil {
		fmt.Printf("ada puts a 1 MiB value: refused (%v)\n", err)
	}
	filled, err := flood(ctx, ada, writers)
	if err != nil {
		return err
	}
	fmt.Printf("ada, %d writers of %d KiB values: NOSPACE after %.1f s (%d puts, %d MiB)\n",
		writers, valueSize>>10, filled.took.Seconds(), filled.puts, filled.bytes>>20)
	save := func() error {
		_, err := bob.Put(ctx, class.Prefix("bob")+class.SummaryKey, `{"learner":"bob"}`)
		return err
	}
	if err := save(); !errors.Is(err, rpctypes.ErrNoSpace) {
		return fmt.Errorf("bob's save on a full cluster: %v, want NOSPACE", err)
	}
	fmt.Println("bob's save while full: refused (NOSPACE)")
	return repair(ctx, root, budget, save)
}

// valueSize is the largest value a put under the request limit carries
// (the key and the request's framing take the rest).
const valueSize = maxRequest - 4<<10

type fill struct {
	took  time.Duration
	puts  int64
	bytes int64
}

// flood writes distinct keys under ada's prefix from writers goroutines
// until the cluster refuses with NOSPACE.
func flood(ctx context.Context, ada *clientv3.Client, writers int) (fill, error) {
	value := strings.Repeat("x", valueSize)
	var puts atomic.Int64
	var firstErr error
	var once sync.Once
	stop := make(chan struct{})
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := ada.Put(ctx, class.Prefix("ada")+fmt.Sprintf("flood/%d/%06d", w, i), value)
				if err != nil {
					once.Do(func() { firstErr = err; close(stop) })
					return
				}
				puts.Add(1)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if !errors.Is(firstErr, rpctypes.ErrNoSpace) {
		return fill{}, fmt.Errorf("the flood ended with %v, not NOSPACE", firstErr)
	}
	return fill{took: took, puts: puts.Load(), bytes: puts.Load() * valueSize}, nil
}

// repair does what the instructor does (remove ada, class repair) and
// times it and bob's first save taken after it began.
func repair(ctx context.Context, root *clientv3.Client, budget int64, save func() error) error {
	start := time.Now()
	if _, err := class.Remove(ctx, root, []string{"ada"}, false); err != nil {
		return err
	}
	saved := make(chan time.Duration, 1)
	go func() {
		for time.Since(start) < time.Minute {
			if save() == nil {
				saved <- time.Since(start)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(saved)
	}()
	done, err := class.Repair(ctx, root, class.RepairOptions{Budget: budget, Learners: []string{"ada"}})
	repaired := time.Since(start)
	for _, l := range done {
		fmt.Println("  repair:", l)
	}
	if err != nil {
		return err
	}
	at, ok := <-saved
	if !ok {
		return errors.New("bob could not save within a minute of the repair")
	}
	fmt.Printf("class remove ada + class repair took %.2f s; bob's save was taken %.2f s after the repair began\n", repaired.Seconds(), at.Seconds())
	return nil
}
