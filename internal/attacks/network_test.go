package attacks

import (
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// The network from a lab that has no etcd (labs 01 to 04): a connection
// to a port on this machine (here, one this test listens on; it could
// be any service of the instructor's) and a listener of its own. A safe
// system: net is refused; past it, the sandbox gives a lab without etcd
// no TCP at all, so both fail for want of permission and the test's
// listener never sees a connection.
//
// Both ask for plain TCP. Go listens with multipath TCP by default (Go
// 1.24's ListenConfig, by go.mod's go line), and Landlock's TCP rules do
// not cover MPTCP sockets: on this kernel a lab past the allowlist gets
// an MPTCP listener, and could connect with one too (README, the class
// section, says so; closing it takes a seccomp filter on the socket
// call, not Landlock).
func TestAttackNetworkWithoutEtcd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code := `
func init() {
	var d net.Dialer
	d.SetMultipathTCP(false)
	c, err := d.Dial("tcp", "127.0.0.1:` + port + `")
	if err == nil {
		c.Close()
	}
	fmt.Printf("attack: connect: %v\n", err)
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err == nil {
		l.Close()
	}
	fmt.Printf("attack: listen: %v\n", err)
}`
	src := hostile(t, []string{"context", "net"}, code)
	mustRefuse(t, src, "imports net:")
	needSandbox(t)
	text := output(gradePast(t, src, nil))
	lines := attackLines(text)
	t.Logf("the attack said: %s", strings.Join(lines, " | "))
	if len(lines) != 2 {
		t.Fatalf("the attack did not run:\n%s", text)
	}
	for _, l := range lines {
		if !strings.Contains(l, "permission denied") {
			t.Errorf("the lab code without etcd used TCP: %s", l)
		}
	}
	if n := accepted.Load(); n > 0 {
		t.Errorf("the test's listener accepted %d connection(s) from the lab code", n)
	}
}
