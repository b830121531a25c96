package history

// The protected resource as a history shows it: what a timeline's cursor
// needs to draw the resource at any instant, from the events alone. A
// run's first resource checks tokens; a script that replaces it (a
// variant) or a learner who switches fencing leaves an event saying so,
// with the switch in its facts.

// Facts.Op of the events the resource leaves besides its writes.
const (
	// OpNewResource: the script replaced the resource with an empty one;
	// Succeeded says whether the new one checks tokens.
	OpNewResource = "new-resource"
	// OpFencing: fencing was switched; Succeeded says whether it is on.
	OpFencing = "fencing"
)

// InitialFencing is whether a run's first resource checks tokens.
const InitialFencing = true

// InitialResource is the resource as a run begins, before any event.
func InitialResource() ResourceState { return ResourceState{Fencing: InitialFencing} }

// After is the resource once event e has happened: a write taken or
// refused, fencing switched, or a new resource.
func (s ResourceState) After(e Event) ResourceState {
	f := e.Facts
	if f == nil {
		return s
	}
	switch {
	case e.Kind == WriteAccepted && f.Op == "write":
		s.Accepted++
		s.Value, s.Writer = f.Key, e.Replica
		s.Highest = max(s.Highest, f.Token)
	case e.Kind == WriteRejected && f.Op == "write":
		s.Rejected++
	case f.Op == OpNewResource:
		s = ResourceState{Fencing: f.Succeeded}
	case f.Op == OpFencing:
		s.Fencing = f.Succeeded
	}
	return s
}

// ResourceState is a snapshot of the resource for display.
type ResourceState struct {
	Fencing  bool
	Highest  int64 // highest token accepted
	Value    string
	Writer   string
	Accepted int
	Rejected int
}
