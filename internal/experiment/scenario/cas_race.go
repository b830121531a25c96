package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// casRaceScenario is the scenario cas-race.
var casRaceScenario = &experiment.Scenario{
	Name:            "cas-race",
	Title:           "Many replicas race one compare-and-swap",
	Summary:         "N replicas send the same create-if-absent transaction at once, 100 rounds; after each round the key is deleted again.",
	Faults:          "none: contention only",
	DefaultReplicas: 20, MinReplicas: 5, MaxReplicas: 50,
	DefaultTTL: 1,
	Run:        runCASRace,
	Predict:    casQuestion,
	Shows:      []history.Property{{Name: "one-winner-each-round", Check: oneWinnerEachRound}},
}

// casRounds is how many rounds the race runs.
const casRounds = 100

func runCASRace(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	rs, err := run.NewReplicas(run.Params.Replicas)
	if err != nil {
		return history.Verdict{}, fmt.Errorf("set up: %w", err)
	}
	if err := run.Phase(ctx, fmt.Sprintf("%d replicas, %d rounds: each round all send If(CreateRevision(leader) = 0) Then(Put leader = me)", len(rs), casRounds)); err != nil {
		return history.Verdict{}, err
	}
	wins := map[string]int{}
	for round := 1; round <= casRounds; round++ {
		winners, err := casRound(ctx, rs)
		if err != nil {
			return history.Verdict{}, fmt.Errorf("round %d: %w", round, err)
		}
		if len(winners) == 1 {
			wins[winners[0]]++
		} else {
			run.Emit(history.Event{Kind: history.InvariantViolated, Text: fmt.Sprintf("round %d: %d winners %v", round, len(winners), winners)})
		}
		text := fmt.Sprintf("round %d: winner %s", round, strings.Join(winners, ", "))
		run.Emit(history.Event{Kind: history.Measured, Value: float64(len(winners)), Unit: "winners", Text: text})
		if _, err := run.Admin().Delete(ctx, "leader"); err != nil {
			return history.Verdict{}, fmt.Errorf("round %d: reset: %w", round, err)
		}
	}
	run.Note("histogram of winners: %s", histogram(wins, rs))
	run.Figure("rounds", casRounds, "rounds", fmt.Sprintf("%d rounds", casRounds))
	run.Figure("distinct_winners", float64(len(wins)), "replicas", fmt.Sprintf("%d different replicas won at least once", len(wins)))
	return history.Verdict{}, nil
}

// oneWinnerEachRound: every round's transactions had exactly one winner.
func oneWinnerEachRound(f *history.Findings) (bool, string) {
	rounds, one := 0, 0
	for _, e := range f.Events {
		if e.Kind == history.Measured && e.Unit == "winners" {
			rounds++
			if e.Value == 1 {
				one++
			}
		}
	}
	say := fmt.Sprintf("exactly one winner in %d of %d rounds", one, rounds)
	if d, ok := f.Figure("distinct_winners"); ok {
		say += fmt.Sprintf("; %.0f different replicas won at least once", d)
	}
	return rounds == casRounds && one == rounds, say
}

// casRound lines every replica up behind a barrier and lets them all send
// the transaction; it returns who succeeded.
func casRound(ctx context.Context, rs []*experiment.Replica) ([]string, error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		errs    []error
	)
	ready := make(chan struct{})
	for _, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cli := r.Client()
			<-ready
			a, err := experiment.CreateKey{Key: "leader", Value: r.Name}.Commit(ctx, cli, r.Run().TryTimeout())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if a.Succeeded {
				winners = append(winners, r.Name)
			}
		}()
	}
	close(ready)
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	sort.Strings(winners)
	return winners, nil
}

func histogram(wins map[string]int, rs []*experiment.Replica) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s:%d", r.Name, wins[r.Name]))
	}
	return strings.Join(parts, " ")
}
