package cli

import (
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

// knownExperiments returns the experiment names lessons and predict
// questions may refer to: exactly the scenarios registered in
// internal/experiment, so `playground check` validates against what runs.
func knownExperiments() []string { return scenario.Names() }

// experimentTitles returns each registered scenario's one-line title by
// name, for the course map's list of a lesson's experiments.
func experimentTitles() map[string]string {
	titles := map[string]string{}
	for _, sc := range scenario.Scenarios() {
		titles[sc.Name] = sc.Title
	}
	return titles
}

// renamedExperiments maps the names scenarios went by before they were
// renamed to their current names, so a lesson naming an old one still
// loads.
func renamedExperiments() map[string]string { return history.OldNames() }

// currentExperimentName is the name an experiment goes by now, for one
// the learner names by an old name (progress reset thundering-herd).
func currentExperimentName(name string) string { return history.CurrentName(name) }

// runScenario is the scenario a history may name: one of the course's
// experiments (the scenario catalog) or a lab run's (labrun's registry),
// for reading and replaying either kind of history file.
func runScenario(name string) *experiment.Scenario {
	if sc := scenario.Lookup(name); sc != nil {
		return sc
	}
	return labrun.LookupScenario(name)
}
