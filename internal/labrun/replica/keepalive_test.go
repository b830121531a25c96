package replica

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The keep-alive reports are what the lab's code was told of its leases:
// one note when its client begins to keep a lease alive (however often
// KeepAlive is called for it), then each answer etcd sent, a renewal or
// the lease's end (once, however many answers say so).
func TestKeepAliveReports(t *testing.T) {
	var out bytes.Buffer
	k := &keepAlives{conn: &Conn{out: bufio.NewWriter(&out)}, started: map[clientv3.LeaseID]bool{}, ended: map[clientv3.LeaseID]bool{}}
	k.start(0x2a)
	k.start(0x2a)
	k.answered(&pb.LeaseKeepAliveResponse{ID: 0x2a, TTL: 2, Header: &pb.ResponseHeader{Revision: 7}})
	k.answered(&pb.LeaseKeepAliveResponse{ID: 0x2a, TTL: 0})
	k.answered(&pb.LeaseKeepAliveResponse{ID: 0x2a, TTL: 0}) // held up with the one before
	var got []Event
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, e)
	}
	if len(got) != 3 {
		t.Fatalf("want a start, a renewal and an end, got %d events: %+v", len(got), got)
	}
	if e := got[0]; e.Facts.Op != "keepalive-start" || e.Facts.Lease != 0x2a || e.Value != FirstKeepAliveTrust.Seconds() {
		t.Errorf("start: %+v %+v", e, e.Facts)
	}
	if e := got[1]; e.Kind != "lease-renewed" || e.TTL != 2 || e.Facts.GrantedTTL != 2 || !e.Facts.Succeeded || e.Facts.Revision != 7 {
		t.Errorf("renewal: %+v %+v", e, e.Facts)
	}
	if e := got[2]; e.Kind != "lease-expired" || e.Facts.Succeeded {
		t.Errorf("end: %+v %+v", e, e.Facts)
	}
}
