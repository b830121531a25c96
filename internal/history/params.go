package history

import "time"

// Params tune a run. Zero values take the scenario's defaults.
type Params struct {
	Replicas int    `json:"replicas"` // how many replicas (scenario default when 0)
	TTL      int64  `json:"ttl"`      // lease TTL in seconds (scenario default when 0)
	Seed     uint64 `json:"seed"`
	// Fencing and VersionedUnlock pick one variant of the fencing and
	// ttl-unlock-bug scenarios; nil runs both, side by side.
	Fencing         *bool `json:"fencing,omitempty"`
	VersionedUnlock *bool `json:"versioned_unlock,omitempty"`
	// Step makes the script wait for Run.Step before each phase.
	Step bool `json:"step,omitempty"`
	// StepDelay, in step mode, takes every step by itself after this
	// long, as a learner who reads that long at each step would.
	StepDelay time.Duration `json:"step_delay_ns,omitempty"`
	// Faults are learner faults to inject at their steps (a schedule
	// read from a history: run --faults).
	Faults []ScheduledFault `json:"-"`
	// Watch, when set, is how long a lab run watches once its faults are
	// done, before it stops its replicas (its default: 3 TTLs). A shrunk
	// run keeps the earliest end that still shows its violation, and its
	// faults file replays with it.
	Watch time.Duration `json:"watch_ns,omitempty"`
}
