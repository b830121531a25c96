package cli

// knownExperiments returns the experiment names lessons and predict
// questions may refer to. It is a fixed list for now: the experiments
// helper replaces it with the real registry (lessons/experiment) when that
// lands, so `playground check` then validates against what actually runs.
func knownExperiments() []string {
	return []string{
		"singleton-vs-election",
		"cas-race",
		"ttl-unlock-bug",
		"renewal",
		"fencing",
		"failover-timing",
		"thundering-herd",
		"shard-ownership",
		"quorum",
		"leader-change-extends-leases",
		"least-privilege",
	}
}
