package experiment

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func clientv3WithPrefix() []clientv3.OpOption {
	return []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}
}

func TestMonitorTwoOwnersAndStaleWrite(t *testing.T) {
	var m monitor
	feed := func(e Event) []Event { return m.observe(e) }
	if v := feed(Event{Kind: Acquired, Replica: "a", Token: 5}); len(v) != 0 {
		t.Fatalf("one owner flagged: %v", v)
	}
	feed(Event{Kind: Paused, Replica: "a"})
	if v := feed(Event{Kind: Acquired, Replica: "b", Token: 6}); len(v) != 0 {
		t.Fatalf("a paused owner counted as acting: %v", v)
	}
	feed(Event{Kind: Resumed, Replica: "a"})
	v := feed(Event{Kind: WriteAccepted, Replica: "a", Token: 5})
	if len(v) != 2 || !strings.Contains(v[0].Text, "two owners") || !strings.Contains(v[1].Text, "stale write") {
		t.Fatalf("zombie write: got %v", v)
	}
	if m.twoOwners != 1 || m.staleWrites != 1 {
		t.Fatalf("counts %d %d", m.twoOwners, m.staleWrites)
	}
	if v := feed(Event{Kind: WriteRejected, Replica: "a", Token: 5}); len(v) != 0 {
		t.Fatalf("the same pair reported twice: %v", v)
	}
	feed(Event{Kind: SteppedDown, Replica: "a"})
	if v := feed(Event{Kind: WriteAccepted, Replica: "b", Token: 6}); len(v) != 0 {
		t.Fatalf("the sole owner's write flagged: %v", v)
	}
}

func TestResourceFencing(t *testing.T) {
	run := &Run{start: time.Now()}
	a, b := &Replica{Name: "a", run: run}, &Replica{Name: "b", run: run}
	for _, c := range []struct {
		fencing   bool
		wantValue string
		wantRej   int
	}{{true, "b", 1}, {false, "a-late", 0}} {
		res := newResource(run, c.fencing)
		res.Write(a, 7, "a")
		res.Write(b, 8, "b")
		ok := res.Write(a, 7, "a-late")
		st := res.State()
		if ok == c.fencing || st.Rejected != c.wantRej || st.Value != c.wantValue || st.Highest != 8 {
			t.Errorf("fencing %v: accepted %v, state %+v", c.fencing, ok, st)
		}
	}
}

// echo serves lines back to the sender.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func TestFaultProxyFreezeAndDrop(t *testing.T) {
	p, err := NewFaultProxy(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	roundTrip := func(msg string, within time.Duration) (string, error) {
		c.SetDeadline(time.Now().Add(within))
		if _, err := io.WriteString(c, msg+"\n"); err != nil {
			return "", err
		}
		return rd.ReadString('\n')
	}
	if got, err := roundTrip("one", time.Second); err != nil || got != "one\n" {
		t.Fatalf("open: %q %v", got, err)
	}
	p.Freeze()
	if got, err := roundTrip("two", 200*time.Millisecond); err == nil {
		t.Fatalf("frozen proxy passed %q", got)
	}
	p.Thaw()
	c.SetDeadline(time.Now().Add(time.Second))
	if got, err := rd.ReadString('\n'); err != nil || got != "two\n" {
		t.Fatalf("held bytes after thaw: %q %v", got, err)
	}
	p.Drop()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := rd.ReadString('\n'); err == nil {
		t.Fatal("dropped connection still open")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		c2.SetDeadline(time.Now().Add(time.Second))
		if _, err := c2.Read(make([]byte, 1)); err == nil {
			t.Fatal("partitioned proxy accepted a new connection")
		}
		c2.Close()
	}
	p.Heal()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	c3.SetDeadline(time.Now().Add(time.Second))
	io.WriteString(c3, "three\n")
	if got, err := bufio.NewReader(c3).ReadString('\n'); err != nil || got != "three\n" {
		t.Fatalf("after heal: %q %v", got, err)
	}
}
