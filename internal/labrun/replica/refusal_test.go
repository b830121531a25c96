package replica

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRefusalWindow: a refusal is open from its start for its length,
// counts the requests it is told to count, and a second start while it
// is open does not reset it; once over, a new one counts afresh.
func TestRefusalWindow(t *testing.T) {
	var r refusal
	t0 := time.Unix(1000, 0)
	if r.request(t0, true) {
		t.Fatal("a refusal never started is open")
	}
	if !r.start(t0, 2*time.Second) {
		t.Fatal("the first start did not open it")
	}
	if r.start(t0.Add(time.Second), 2*time.Second) {
		t.Fatal("a start while it is open opened it again")
	}
	for _, c := range []struct {
		at      time.Duration
		counted bool
		open    bool
	}{{0, true, true}, {500 * time.Millisecond, false, true}, {1999 * time.Millisecond, true, true}, {2 * time.Second, true, false}} {
		if got := r.request(t0.Add(c.at), c.counted); got != c.open {
			t.Errorf("at %s: open %v, want %v", c.at, got, c.open)
		}
	}
	if d, n := r.total(); d != 2*time.Second || n != 2 {
		t.Errorf("total %s, %d requests; want 2s, 2 (one request was not to be counted, one came after the end)", d, n)
	}
	if !r.start(t0.Add(3*time.Second), time.Second) {
		t.Fatal("a start after the end did not open it")
	}
	if _, n := r.total(); n != 0 {
		t.Errorf("a new refusal starts with %d requests counted", n)
	}
}

// TestProposalIsWhatEtcdRefuses: the writes etcd refuses while its apply
// lags (its raft proposals), not its reads.
func TestProposalIsWhatEtcdRefuses(t *testing.T) {
	put := &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: []byte("k")}}}
	get := &pb.RequestOp{Request: &pb.RequestOp_RequestRange{RequestRange: &pb.RangeRequest{Key: []byte("k")}}}
	for _, c := range []struct {
		name string
		req  any
		want bool
	}{
		{"put", &pb.PutRequest{}, true},
		{"delete", &pb.DeleteRangeRequest{}, true},
		{"grant", &pb.LeaseGrantRequest{}, true},
		{"revoke", &pb.LeaseRevokeRequest{}, true},
		{"txn that writes", &pb.TxnRequest{Success: []*pb.RequestOp{put}}, true},
		{"txn that writes only if its comparison fails", &pb.TxnRequest{Success: []*pb.RequestOp{get}, Failure: []*pb.RequestOp{put}}, true},
		{"txn that reads", &pb.TxnRequest{Success: []*pb.RequestOp{get}, Failure: []*pb.RequestOp{get}}, false},
		{"range", &pb.RangeRequest{}, false},
		{"time to live", &pb.LeaseTimeToLiveRequest{}, false},
	} {
		if got := proposal(c.req); got != c.want {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRefusedIsEtcdsTooManyRequests: a refused write gets etcd's own
// error, which etcd's client does not retry (not Unavailable) and turns
// into rpctypes.ErrTooManyRequests for the lab's code; the refused
// writes are counted, but the clocked lab functions', and a read goes
// through, uncounted.
func TestRefusedIsEtcdsTooManyRequests(t *testing.T) {
	err := refuse()
	if status.Code(err) != codes.ResourceExhausted || !errors.Is(rpctypes.Error(err), rpctypes.ErrTooManyRequests) {
		t.Fatalf("a refusal answers %v, want etcdserver: too many requests", err)
	}
	f := newFaulter(&Conn{}, 2, nil)
	f.conn.Clocked("CommitOffset")
	f.refusal.start(time.Now(), time.Minute)
	write := &pb.TxnRequest{Success: []*pb.RequestOp{{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{}}}}}
	if !f.refuses(Site{Entry: "CommitOffset"}, write) {
		t.Error("a clocked function's write went through a refusal")
	}
	if f.refuses(Site{Entry: "(*Worker).Run"}, &pb.RangeRequest{}) {
		t.Error("a read was refused")
	}
	if !f.refuses(Site{Entry: "(*Worker).Run"}, &pb.LeaseGrantRequest{}) {
		t.Error("a lease grant went through a refusal")
	}
	if _, n := f.refusal.total(); n != 1 {
		t.Errorf("%d requests counted, want 1: the Run's grant, not its read, nor the clocked commit", n)
	}
}

// TestLateRequestIsReportedOnceItsCallerGaveUp: a request sent late
// after its lease ended returns to its caller as soon as the caller's
// context ends, goes out all the same, and what etcd changed with it is
// reported as the replica's own change (Facts.Changed).
func TestLateRequestIsReportedOnceItsCallerGaveUp(t *testing.T) {
	// The replica's protocol lines, read as they come (this package
	// travels with the course alone: no test helpers of the module).
	pr, pw := io.Pipe()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	f := newFaulter(&Conn{out: bufio.NewWriter(pw)}, 0, nil)
	sent := make(chan struct{})
	invoker := func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		r := reply.(*pb.DeleteRangeResponse)
		r.Header, r.Deleted = &pb.ResponseHeader{Revision: 42}, 1
		close(sent)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := f.late(ctx, "/etcdserverpb.KV/DeleteRange", &pb.DeleteRangeRequest{}, &pb.DeleteRangeResponse{}, nil, invoker, nil)
	if status.Code(err) != codes.Canceled {
		t.Fatalf("the caller whose context ended got %v, want Canceled", err)
	}
	select {
	case <-sent:
		t.Fatal("the request was sent before its hold ended")
	default:
	}
	var line string
	select {
	case line = <-lines:
	case <-time.After(10 * time.Second):
		t.Fatal("no report of the late request within 10 s")
	}
	if !strings.Contains(line, `"changed":[42]`) || !strings.Contains(line, "deleted 1 key(s) at revision 42") {
		t.Errorf("the report says %q", line)
	}
}
