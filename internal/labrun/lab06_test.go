package labrun

// Lab 06: a comparison on ModRevision refuses the holder once it
// rewrote its lock key; a write in the Else branch lands for the paused
// holder, woken after its lock went to another; a Write that ignores
// Succeeded reports the refused write as written; a delete in the Else
// branch takes the new holder's value away.
var lab06Case = labCase{
	id:        "06",
	schedules: []string{"pause-owner", "cut-off-owner", "crash-owner"},
	bugs: []bugCase{
		{"solutions/06_fenced_write/testdata/mutants/mod_revision.patch", "calm", "owner-refused at"},
		{"solutions/06_fenced_write/testdata/bugs/else_writes_anyway.patch", "pause-owner", "stale-write at"},
		{"solutions/06_fenced_write/testdata/bugs/ignores_succeeded.patch", "pause-owner", "phantom-write at"},
		// Refused, its Else branch deletes the data: the holder who took
		// the lock while it was paused loses what it wrote.
		{"solutions/06_fenced_write/testdata/explore/else_deletes_data.patch", "pause-owner", "clobbered at"},
	},
	extra: stubRun,
}
