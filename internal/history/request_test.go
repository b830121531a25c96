package history

import "testing"

// Every request fault kind is said in words: a kind missing from
// String's map would be printed as its bare name in the explore report
// and on the timeline. The stop's kinds read as well at a stream.
func TestRequestFaultSaysEveryKind(t *testing.T) {
	req := CallSite{File: "labs/07_election/election.go", Line: 97, Func: "(*Candidate).term", RPC: "LeaseGrant"}
	ka := CallSite{File: "labs/07_election/election.go", Line: 101, Func: "(*Candidate).term", RPC: "LeaseKeepAlive"}
	for _, k := range FaultKinds() {
		f := RequestFault{Fault: k, Role: "owner", Site: req, Occurrence: 1}
		if got, bare := f.String(), string(k)+" the owner's"; len(got) >= len(bare) && got[:len(bare)] == bare {
			t.Errorf("%s is said %q, as its bare name", k, got)
		}
	}
	sever := RequestFault{Fault: SeverAfter, Role: "owner", Site: ka, Occurrence: 1}
	if got, want := sever.String(), "cut the network through its stop, at the owner's 1st answer on the stream from election.go:101 LeaseKeepAlive ((*Candidate).term)"; got != want {
		t.Errorf("sever says %q, want %q", got, want)
	}
	stop := RequestFault{Fault: StopAfter, Role: "newcomer", Site: req, Occurrence: 1}
	if got, want := stop.String(), "tell the replica to stop after the newcomer's 1st request from election.go:97 LeaseGrant ((*Candidate).term)"; got != want {
		t.Errorf("stop says %q, want %q", got, want)
	}
}
