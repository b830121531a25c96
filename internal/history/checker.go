package history

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// The checker: one function from a History to what it shows, for every
// scenario, the TUI, the command line and a replay alike. It reads only
// the history: who believed it owned (Acquired until Lost, SteppedDown,
// Released or Crashed; not acting while paused), what etcd held (the
// KeyChanged events), what the resource took (writes with their tokens)
// and the figures the script measured. A scenario states what it exists
// to show as Properties over these Findings; the verdict is whether they
// hold, a Finding each (verdict.go), with sentences made from the
// findings, so it never says what the history contradicts.

// Property is one thing a scenario exists to show, judged on the findings
// of one part of its history.
type Property struct {
	// Name is the property's stable name, which its Finding carries
	// ("two-owners", "one-holder"): what a program reads where a person
	// reads the sentence. Unique among a scenario's properties of one
	// part.
	Name string
	// Part names the part it is about ("" the whole run, or a part a
	// script began with Run.Part).
	Part string
	// Check reports whether the findings show it and says, in a
	// sentence, what they show, whether or not it holds. Judge makes its
	// Finding: the name, the part, and the part's first two owners at
	// once, stale write or lease extension (the instant Focus opens at)
	// as its instant, replicas and event.
	Check func(f *Findings) (bool, string)
	// Find, for a property that knows where it held or broke (a lab's
	// rule: the replica, the instant), judges the findings into a
	// Finding of its own; Judge sets its name and part. A property has
	// Check or Find.
	Find func(f *Findings) Finding
	// When, if set, says whether a run with these parameters is meant
	// to show it (a variant the learner left out is not).
	When func(p Params) bool
}

// Term is one replica's ownership as it believed it: from its Acquired
// event until it learned or decided otherwise.
type Term struct {
	Replica string
	Token   int64
	Key     string // its lock or election key, when the event said
	From    time.Duration
	To      time.Duration // the end of the part if it never ended
	Ended   Kind          // what ended it; "" if it lasted to the end
}

// Overlap is a moment two replicas acted as owner at once (neither
// paused), with who etcd said held the lock then.
type Overlap struct {
	At     time.Duration
	Event  Event    // the act that made it
	Acting string   // the replica whose act (a take-over, a write) made it
	Owners []string // "p2 (token 9)", sorted
	Names  []string // the owners' names, in the same order
	// Holder is the replica whose key etcd held at that moment among the
	// owners' keys ("" when etcd held none of them or no key was named).
	Holder string
}

// StaleWrite is a write carrying a lower token than one already issued.
type StaleWrite struct {
	At       time.Duration
	Event    Event // the write
	Replica  string
	Token    int64
	Issued   int64 // the highest token issued by then
	Accepted bool
}

// Gap is a stretch with no owner acting, between two terms.
type Gap struct {
	From, To time.Duration
	// After is what began it: the last acting owner's Crashed, Paused,
	// Lost, SteppedDown or Released, with who.
	After   Kind
	Replica string
}

// Length is how long the gap lasted.
func (g Gap) Length() time.Duration { return g.To - g.From }

// Extension is a lease whose time left, as TimeToLive reported it, went
// up without a renewal in between: a raft leader change restarted it.
type Extension struct {
	At            time.Duration
	Event         Event // the TimeToLive reading that went up
	Lease         int64
	Before, After int64 // seconds left, before and after
}

// Findings are what the checker found in one part of a history.
type Findings struct {
	Part       string
	Params     Params  // the run's
	Events     []Event // the part's events
	Terms      []Term
	TwoOwners  []Overlap
	Stale      []StaleWrite
	Gaps       []Gap
	Extensions []Extension
	Figures    map[string]float64
	Faults     []Event
}

// Parts splits a history into its parts: the events before the first
// PartBegins are part "", and the whole run is also part "".
func Parts(h *History) []*Findings {
	all := &Findings{Part: "", Events: make([]Event, 0, len(h.Events))}
	out := []*Findings{all}
	cur := all
	for _, e := range h.Events {
		if e.Kind == PartBegins {
			cur = &Findings{Part: e.Text}
			out = append(out, cur)
			continue
		}
		all.Events = append(all.Events, e)
		if cur != all {
			cur.Events = append(cur.Events, e)
		}
	}
	for _, f := range out {
		f.Params = h.Params
		f.find()
	}
	return out
}

// sweep is the state the checker carries through a part's events.
type sweep struct {
	f       *Findings
	owners  map[string]*Term // who believes it owns, by name
	paused  map[string]bool
	held    map[string]StoreKey // what etcd holds, by the watch
	highest int64               // the highest token issued so far
	end     time.Duration
	owned   bool // someone owned since the part began
	gap     Gap  // the gap under way (After set) or none
	lastTTL map[int64]int64
}

// find computes the findings from f.Events.
func (f *Findings) find() {
	f.Figures = map[string]float64{}
	sw := &sweep{f: f, owners: map[string]*Term{}, paused: map[string]bool{}, held: map[string]StoreKey{}, lastTTL: map[int64]int64{}}
	if n := len(f.Events); n > 0 {
		sw.end = f.Events[n-1].At
	}
	for _, e := range f.Events {
		sw.step(e)
		if e.Kind.IsFault() {
			f.Faults = append(f.Faults, e)
		}
	}
	for _, t := range sw.owners {
		f.Terms = append(f.Terms, *t)
	}
	sort.Slice(f.Terms, func(i, j int) bool { return f.Terms[i].From < f.Terms[j].From })
}

// step takes one event into account.
func (sw *sweep) step(e Event) {
	f := sw.f
	switch {
	case e.Kind == KeyChanged && e.Facts != nil && e.Facts.Held != nil:
		if e.Facts.Op == "delete" {
			delete(sw.held, e.Facts.Key)
		} else {
			sw.held[e.Facts.Key] = *e.Facts.Held
		}
	case e.Kind == Acquired:
		sw.acquired(e)
	case e.Kind == Lost || e.Kind == SteppedDown || e.Kind == Released || e.Kind == Crashed:
		if t := sw.owners[e.Replica]; t != nil {
			t.To, t.Ended = e.At, e.Kind
			f.Terms = append(f.Terms, *t)
			delete(sw.owners, e.Replica)
		}
		if e.Kind == Crashed {
			delete(sw.paused, e.Replica)
		}
		sw.beginGap(e)
	case e.Kind == Paused:
		sw.paused[e.Replica] = true
		sw.beginGap(e)
	case e.Kind == Resumed:
		delete(sw.paused, e.Replica)
		if sw.owners[e.Replica] != nil {
			sw.endGap(e)
		}
	case e.Kind == WriteAccepted || e.Kind == WriteRejected:
		if sw.owners[e.Replica] != nil {
			f.overlap(e, sw.owners, sw.paused, sw.held)
		}
		if e.Token < sw.highest {
			f.Stale = append(f.Stale, StaleWrite{At: e.At, Event: e, Replica: e.Replica, Token: e.Token, Issued: sw.highest, Accepted: e.Kind == WriteAccepted})
		}
	case e.Kind == Measured:
		if e.Figure != "" {
			f.Figures[e.Figure] = e.Value
		}
		f.extension(e, sw.lastTTL)
	case e.Kind == LeaseRenewed && e.Facts != nil:
		delete(sw.lastTTL, e.Facts.Lease)
	}
}

func (sw *sweep) acquired(e Event) {
	t := &Term{Replica: e.Replica, Token: e.Token, From: e.At, To: sw.end}
	if e.Facts != nil {
		t.Key = e.Facts.Key
	}
	sw.owners[e.Replica] = t
	sw.highest = max(sw.highest, e.Token)
	sw.endGap(e)
	sw.owned = true
	sw.f.overlap(e, sw.owners, sw.paused, sw.held)
}

// acting counts the owners that are not paused.
func (sw *sweep) acting() int {
	n := 0
	for name := range sw.owners {
		if !sw.paused[name] {
			n++
		}
	}
	return n
}

// beginGap starts a gap when e left no owner acting.
func (sw *sweep) beginGap(e Event) {
	if sw.owned && sw.acting() == 0 && sw.gap.After == "" {
		sw.gap = Gap{From: e.At, After: e.Kind, Replica: e.Replica}
	}
}

// endGap ends the gap under way at e, if any.
func (sw *sweep) endGap(e Event) {
	if sw.gap.After != "" {
		sw.gap.To = e.At
		sw.f.Gaps = append(sw.f.Gaps, sw.gap)
		sw.gap = Gap{}
	}
}

// overlap records a moment of two acting owners, once per set of owners
// in a row.
func (f *Findings) overlap(e Event, owners map[string]*Term, paused map[string]bool, held map[string]StoreKey) {
	var names []string
	holder := ""
	for name, t := range owners {
		if paused[name] {
			continue
		}
		names = append(names, name)
		if k, ok := held[t.Key]; ok && t.Key != "" && k.CreateRevision == t.Token {
			holder = name
		}
	}
	if len(names) < 2 {
		return
	}
	sort.Strings(names)
	set := make([]string, len(names))
	for i, name := range names {
		set[i] = fmt.Sprintf("%s (token %d)", name, owners[name].Token)
	}
	if n := len(f.TwoOwners); n > 0 && slices.Equal(f.TwoOwners[n-1].Owners, set) {
		return
	}
	f.TwoOwners = append(f.TwoOwners, Overlap{At: e.At, Event: e, Acting: e.Replica, Owners: set, Names: names, Holder: holder})
}

// extension notes a TimeToLive reading (Facts.Op "timetolive") that went
// up since the last one of the same lease with no renewal in between.
func (f *Findings) extension(e Event, last map[int64]int64) {
	if e.Facts == nil || e.Facts.Op != "timetolive" || e.Facts.TTLLeft < 0 {
		return
	}
	id, left := e.Facts.Lease, e.Facts.TTLLeft
	if before, ok := last[id]; ok && left > before {
		f.Extensions = append(f.Extensions, Extension{At: e.At, Event: e, Lease: id, Before: before, After: left})
	}
	last[id] = left
}

// Find returns the findings of the named part (nil if the history has no
// such part).
func Find(h *History, part string) *Findings {
	for _, f := range Parts(h) {
		if f.Part == part {
			return f
		}
	}
	return nil
}

// Judge judges a history by a scenario's properties (shows) and returns
// the verdict: shown when every property holds, with a Finding for each
// (Verdict.Sentence says what they show). A run that ended in an error
// (runErr) says so after what it did show.
func Judge(h *History, shows []Property, runErr error) Verdict {
	v := Verdict{Scenario: h.Scenario, Showed: true, Figures: map[string]float64{}}
	parts := Parts(h)
	for _, f := range parts {
		for k, x := range f.Figures {
			v.Figures[k] = x
		}
	}
	for _, p := range shows {
		if p.When != nil && !p.When(h.Params) {
			continue
		}
		fd := p.judge(findPart(parts, p.Part))
		v.Showed = v.Showed && fd.Held
		v.Findings = append(v.Findings, fd)
	}
	if runErr != nil {
		v.RunError = runErr.Error()
	}
	return v
}

// judge is p's finding on part f (nil: the run never reached it).
func (p Property) judge(f *Findings) Finding {
	var fd Finding
	switch {
	case f == nil:
		fd = Finding{Text: fmt.Sprintf("the run never reached %s", p.Part)}
	case p.Find != nil:
		fd = p.Find(f)
	default:
		fd.Held, fd.Text = p.Check(f)
		if e, who, ok := f.first(); ok {
			fd.At, fd.Timed, fd.Replicas, fd.Events = e.At, true, who, []Event{e}
		}
	}
	fd.Property, fd.Part = p.Name, p.Part
	return fd
}

func findPart(parts []*Findings, name string) *Findings {
	for _, f := range parts {
		if f.Part == name {
			return f
		}
	}
	return nil
}

// Who owned what, in words, for the properties' sentences.

// Owners names the replicas with a term in f.
func (f *Findings) Owners() []string {
	var out []string
	for _, t := range f.Terms {
		if !slices.Contains(out, t.Replica) {
			out = append(out, t.Replica)
		}
	}
	return out
}

// LastEvent returns the last event of f matching ok, and whether there is one.
func (f *Findings) LastEvent(ok func(Event) bool) (Event, bool) {
	for i := len(f.Events) - 1; i >= 0; i-- {
		if ok(f.Events[i]) {
			return f.Events[i], true
		}
	}
	return Event{}, false
}

// FirstEvent returns the first event of f matching ok.
func (f *Findings) FirstEvent(ok func(Event) bool) (Event, bool) {
	for _, e := range f.Events {
		if ok(e) {
			return e, true
		}
	}
	return Event{}, false
}

// Figure returns a figure and whether the part has it.
func (f *Findings) Figure(name string) (float64, bool) {
	x, ok := f.Figures[name]
	return x, ok
}

// KindIs matches the events of kind k, of replica when it is not "".
func KindIs(k Kind, replica string) func(Event) bool {
	return func(e Event) bool { return e.Kind == k && (replica == "" || e.Replica == replica) }
}
