package experiment

import (
	"fmt"
	"sync"

	"github.com/ownership-election/playground/internal/history"
)

// Resource is the protected resource: fenced storage holding one value.
// With fencing on it remembers the highest token it has accepted and
// refuses any write carrying a lower one; with fencing off it takes every
// write, which is how a zombie owner's late write does its damage.
type Resource struct {
	run *Run

	mu       sync.Mutex
	fencing  bool
	highest  int64
	value    string
	writer   string
	accepted int
	rejected int
}

func newResource(run *Run, fencing bool) *Resource { return &Resource{run: run, fencing: fencing} }

// SetFencing turns token checking on or off.
func (res *Resource) SetFencing(on bool) {
	res.mu.Lock()
	res.fencing = on
	res.mu.Unlock()
	res.run.Emit(history.Event{Kind: history.Note, Facts: &history.Facts{Op: history.OpFencing, Succeeded: on}, Text: "fencing at the resource turned " + onOff(on)})
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Write stores value on behalf of r carrying token, unless fencing is on
// and a higher token has been seen. It reports whether it was accepted.
func (res *Resource) Write(r *Replica, token int64, value string) bool {
	res.mu.Lock()
	ok := !res.fencing || token >= res.highest
	highest := res.highest
	if ok {
		res.highest = max(res.highest, token)
		res.value, res.writer = value, r.Name
		res.accepted++
	} else {
		res.rejected++
	}
	res.mu.Unlock()
	f := &history.Facts{Op: "write", Key: value, Succeeded: ok, Token: token, Highest: highest}
	if ok {
		r.Emit(history.Event{Kind: history.WriteAccepted, Token: token, Facts: f, Text: fmt.Sprintf("write %q with token %d accepted", value, token)})
	} else {
		r.Emit(history.Event{Kind: history.WriteRejected, Token: token, Facts: f, Text: fmt.Sprintf("write %q with token %d rejected: token %d already seen", value, token, highest)})
	}
	return ok
}

// State returns a snapshot.
func (res *Resource) State() history.ResourceState {
	res.mu.Lock()
	defer res.mu.Unlock()
	return history.ResourceState{Fencing: res.fencing, Highest: res.highest, Value: res.value, Writer: res.writer,
		Accepted: res.accepted, Rejected: res.rejected}
}
