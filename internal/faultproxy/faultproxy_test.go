package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// Waits that should end as soon as the proxy does its job are generous, so
// a loaded machine cannot fail them; quiet is how long a check listens for
// bytes that must not arrive (a slow machine can only make it pass more
// easily, never fail wrongly).
const (
	generous = 5 * time.Second
	quiet    = 100 * time.Millisecond
)

// echoServer is the proxy's target: it sends every line back and reports
// what it received, and the test can also write to a connection from the
// server's side.
type echoServer struct {
	addr     string
	accepted atomic.Int64
	conns    chan net.Conn // each accepted connection
	lines    chan string   // each line received, in order
}

func newEchoServer(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{addr: ln.Addr().String(), conns: make(chan net.Conn, 16), lines: make(chan string, 16)}
	var open []net.Conn
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			open = append(open, c)
			s.conns <- c
			go func() {
				defer c.Close()
				rd := bufio.NewReader(c)
				for {
					line, err := rd.ReadString('\n')
					if err != nil {
						return
					}
					s.lines <- line
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

// nextConn is the server's side of the connection it accepted next.
func (s *echoServer) nextConn(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-s.conns:
		return c
	case <-time.After(generous):
		t.Fatal("the server accepted no connection")
		return nil
	}
}

// client is one connection to the proxy.
type client struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dial(t *testing.T, p *Proxy) *client {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dial the proxy: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, rd: bufio.NewReader(c)}
}

func (cl *client) send(line string) {
	cl.t.Helper()
	cl.c.SetWriteDeadline(time.Now().Add(generous))
	if _, err := io.WriteString(cl.c, line+"\n"); err != nil {
		cl.t.Fatalf("send %q: %v", line, err)
	}
}

func (cl *client) expect(line string) {
	cl.t.Helper()
	cl.c.SetReadDeadline(time.Now().Add(generous))
	got, err := cl.rd.ReadString('\n')
	if err != nil || got != line+"\n" {
		cl.t.Fatalf("read %q, %v; want %q", got, err, line)
	}
}

func (cl *client) roundTrip(line string) {
	cl.t.Helper()
	cl.send(line)
	cl.expect(line)
}

// expectNothing fails if any byte arrives within quiet.
func (cl *client) expectNothing(why string) {
	cl.t.Helper()
	cl.c.SetReadDeadline(time.Now().Add(quiet))
	got, err := cl.rd.ReadString('\n')
	if !errors.Is(err, os.ErrDeadlineExceeded) || got != "" {
		cl.t.Fatalf("%s: read %q, %v; want nothing", why, got, err)
	}
}

// expectClosed fails unless the proxy closes the connection: a read ends
// in EOF or a reset, not a timeout.
func (cl *client) expectClosed(why string) {
	cl.t.Helper()
	cl.c.SetReadDeadline(time.Now().Add(generous))
	got, err := cl.rd.ReadString('\n')
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		cl.t.Fatalf("%s: read %q, %v; want the connection closed", why, got, err)
	}
}

func expectNoLine(t *testing.T, s *echoServer, why string) {
	t.Helper()
	select {
	case line := <-s.lines:
		t.Fatalf("%s: the server received %q", why, line)
	case <-time.After(quiet):
	}
}

func expectLine(t *testing.T, s *echoServer, want string) {
	t.Helper()
	select {
	case line := <-s.lines:
		if line != want+"\n" {
			t.Fatalf("the server received %q, want %q", line, want)
		}
	case <-time.After(generous):
		t.Fatalf("the server never received %q", want)
	}
}

func newProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestForwardsBothWays(t *testing.T) {
	s := newEchoServer(t)
	p := newProxy(t, s.addr)
	cl := dial(t, p)
	cl.roundTrip("one")
	expectLine(t, s, "one")
	cl.roundTrip("two")
	expectLine(t, s, "two")
	srv := s.nextConn(t)
	if _, err := io.WriteString(srv, "from the server\n"); err != nil {
		t.Fatal(err)
	}
	cl.expect("from the server")
	if p.Frozen() {
		t.Fatal("a new proxy reports Frozen")
	}
}

func TestFreezeHoldsBothWaysAndThawReleases(t *testing.T) {
	s := newEchoServer(t)
	p := newProxy(t, s.addr)
	cl := dial(t, p)
	cl.roundTrip("before")
	expectLine(t, s, "before")
	srv := s.nextConn(t)

	p.Freeze()
	p.Freeze() // twice is the same as once
	if !p.Frozen() {
		t.Fatal("Frozen() = false after Freeze")
	}
	cl.send("held up")
	expectNoLine(t, s, "client to server while frozen")
	if _, err := io.WriteString(srv, "held down\n"); err != nil {
		t.Fatal(err)
	}
	cl.expectNothing("server to client while frozen")

	// A connection made during the freeze is accepted but carries nothing.
	late := dial(t, p)
	late.send("late")
	late.expectNothing("a connection made while frozen")

	p.Thaw()
	if p.Frozen() {
		t.Fatal("Frozen() = true after Thaw")
	}
	p.Thaw() // twice is the same as once
	// The held lines arrive on the connections that were open all along;
	// on cl, "held down" was held first, so it comes first.
	cl.expect("held down")
	cl.expect("held up")
	late.expect("late")
	// The two connections' lines reach the server in either order.
	got := []string{<-s.lines, <-s.lines}
	slices.Sort(got)
	if want := []string{"held up\n", "late\n"}; !slices.Equal(got, want) {
		t.Fatalf("after Thaw the server received %q, want %q", got, want)
	}
	cl.roundTrip("after")
	expectLine(t, s, "after")
}

func TestCutClosesConnectionsButKeepsAccepting(t *testing.T) {
	s := newEchoServer(t)
	p := newProxy(t, s.addr)
	a, b := dial(t, p), dial(t, p)
	a.roundTrip("a")
	b.roundTrip("b")

	p.Cut()
	a.expectClosed("after Cut")
	b.expectClosed("after Cut")
	c := dial(t, p)
	c.roundTrip("c")
}

func TestCutWhileFrozenReleasesHeldConnections(t *testing.T) {
	s := newEchoServer(t)
	p := newProxy(t, s.addr)
	a := dial(t, p)
	a.roundTrip("a")
	expectLine(t, s, "a")
	p.Freeze()
	a.send("held")
	p.Cut()
	a.expectClosed("after Cut while frozen")
	p.Thaw()
	expectNoLine(t, s, "bytes held on a cut connection")
	b := dial(t, p)
	b.roundTrip("b")
}

func TestCloseAfterCutWhileFrozenReturns(t *testing.T) {
	s := newEchoServer(t)
	p := newProxy(t, s.addr)
	a := dial(t, p)
	a.roundTrip("a")
	expectLine(t, s, "a")
	p.Freeze()
	a.send("held")
	// Meanwhile the proxy reads "held" and parks it at the gate.
	expectNoLine(t, s, "client to server while frozen")
	p.Cut()
	a.expectClosed("after Cut while frozen")
	// Close waits for the proxy's goroutines, so, still frozen, it returns
	// only if the Cut released the copy holding "held".
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(generous):
		p.Thaw()
		t.Fatal("Close did not return: a copy held by the freeze outlived its cut connection")
	}
}

func TestPartitionRefusesUntilHeal(t *testing.T) {
	s := newEchoServer(t)
	p := newProxy(t, s.addr)
	a := dial(t, p)
	a.roundTrip("a")

	p.Partition()
	a.expectClosed("after Partition")
	for range 3 {
		// The dial may succeed (the listener stays open) but the proxy
		// closes the connection without reaching the server.
		if c, err := net.Dial("tcp", p.Addr()); err == nil {
			cl := &client{t: t, c: c, rd: bufio.NewReader(c)}
			t.Cleanup(func() { c.Close() })
			cl.send("refused")
			cl.expectClosed("a connection made while partitioned")
		}
	}

	p.Heal()
	b := dial(t, p)
	b.roundTrip("b")
	// The server accepts in order, so by the time it has echoed b's line
	// it would have accepted any connection made during the partition.
	if n := s.accepted.Load(); n != 2 {
		t.Fatalf("the server accepted %d connections, want 2 (none while partitioned)", n)
	}
	var got []string
	for range 2 {
		got = append(got, <-s.lines)
	}
	if want := []string{"a\n", "b\n"}; !slices.Equal(got, want) {
		t.Fatalf("the server received %q, want %q", got, want)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	s := newEchoServer(t)
	p, err := New(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	a := dial(t, p)
	a.roundTrip("a")
	p.Freeze()
	a.send("held")
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	a.expectClosed("after Close")
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Fatal("the proxy still accepts connections after Close")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestDeadTargetClosesTheConnection(t *testing.T) {
	// A dead target is not New's error (the target may come up later);
	// a connection to the proxy is closed at once instead.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	p := newProxy(t, dead)
	cl := dial(t, p)
	cl.expectClosed("a connection to a proxy whose target is down")
}
