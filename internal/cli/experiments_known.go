package cli

import "github.com/ownership-election/playground/internal/experiment"

// knownExperiments returns the experiment names lessons and predict
// questions may refer to: exactly the scenarios registered in
// internal/experiment, so `playground check` validates against what runs.
func knownExperiments() []string { return experiment.Names() }
