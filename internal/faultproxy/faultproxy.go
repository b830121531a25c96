// Package faultproxy is a loopback TCP proxy that can break the network
// between one client and its server on command: freeze it (a long pause),
// cut its connections (a crash of the far end) or partition it (cut off
// until healed). The course puts one in front of etcd for each replica it
// wants to hurt, so a fault hits exactly that replica.
package faultproxy

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds the dial to the target; on loopback a dial either
// connects or is refused at once, so this only matters if something is
// badly wrong.
const dialTimeout = 2 * time.Second

// Proxy forwards every connection made to Addr to the target. It starts
// open; its faults are:
//
//   - Freeze and Thaw: bytes are held in both directions but connections
//     stay open, which is what a stopped process or a stalled network
//     looks like from the other side. Thaw lets the held bytes through.
//   - Cut: every open connection is closed at once, as when the far end
//     crashes; new connections are still accepted.
//   - Partition and Heal: open connections are closed and new ones are
//     closed as soon as they are accepted, until Heal.
//
// The methods are safe to call from any goroutine.
type Proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup // the accept loop and every link's goroutines

	mu          sync.Mutex
	thawed      chan struct{} // closed while traffic flows
	partitioned bool
	done        bool
	links       map[*link]struct{}
}

// link is one client connection and its connection to the target.
type link struct {
	in, out net.Conn      // out is nil until the dial succeeds
	cut     chan struct{} // closed when the link is closed
}

// New listens on a free loopback port and forwards each connection to
// target ("host:port").
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fault proxy for %s: listen: %w", target, err)
	}
	p := &Proxy{
		ln:     ln,
		target: target,
		thawed: make(chan struct{}),
		links:  map[*link]struct{}{},
	}
	close(p.thawed)
	p.wg.Go(p.serve)
	return p, nil
}

// Addr is the proxy's "127.0.0.1:port"; clients dial it instead of the
// target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Freeze holds every byte in both directions until Thaw. Connections stay
// open and new ones are accepted, but nothing gets through.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
	default: // already frozen
	}
}

// Thaw lets traffic flow again, the bytes held during the freeze first.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed: // not frozen
	default:
		close(p.thawed)
	}
}

// Frozen reports whether traffic is held.
func (p *Proxy) Frozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		return false
	default:
		return true
	}
}

// Cut closes every open connection; clients that dial again get through.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLinksLocked()
}

// Partition closes every open connection and keeps closing new ones until
// Heal.
func (p *Proxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partitioned = true
	p.closeLinksLocked()
}

// Heal ends a partition: new connections get through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partitioned = false
}

// Close stops listening, closes every connection (held bytes are dropped)
// and returns once the proxy's goroutines have ended. Calling it again
// does nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return nil
	}
	p.done = true
	p.closeLinksLocked()
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("close fault proxy for %s: %w", p.target, err)
	}
	return nil
}

func (p *Proxy) closeLinksLocked() {
	for l := range p.links {
		l.closeLocked()
	}
	clear(p.links)
}

// closeLocked closes both connections and wakes any copy held at the gate;
// the caller holds p.mu.
func (l *link) closeLocked() {
	select {
	case <-l.cut:
		return
	default:
	}
	close(l.cut)
	l.in.Close()
	if l.out != nil {
		l.out.Close()
	}
}

func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // Close
		}
		p.wg.Go(func() { p.pipe(in) })
	}
}

func (p *Proxy) pipe(in net.Conn) {
	l := &link{in: in, cut: make(chan struct{})}
	// The link is tracked before the dial so that a Cut during the dial
	// closes it too.
	p.mu.Lock()
	if p.partitioned || p.done {
		p.mu.Unlock()
		in.Close()
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()

	out, err := net.DialTimeout("tcp", p.target, dialTimeout)
	p.mu.Lock()
	if err == nil {
		l.out = out
	}
	_, tracked := p.links[l]
	if err != nil || !tracked || p.partitioned || p.done {
		// The link may already be closed (by a Cut during the dial), in
		// which case closing it again would not reach out.
		p.dropLocked(l)
		p.mu.Unlock()
		if err == nil {
			out.Close()
		}
		return
	}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { p.copy(l, out, in) })
	wg.Go(func() { p.copy(l, in, out) })
	wg.Wait()
}

func (p *Proxy) dropLocked(l *link) {
	l.closeLocked()
	delete(p.links, l)
}

// copy forwards src to dst until either side ends, then closes the link.
// Each chunk read waits at the gate before it is written, so a freeze
// holds it; not reading further meanwhile lets TCP hold back the rest.
func (p *Proxy) copy(l *link, dst, src net.Conn) {
	defer func() {
		p.mu.Lock()
		p.dropLocked(l)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitThawed(l) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection
		}
	}
}

// waitThawed blocks while the proxy is frozen; false means the link was
// closed meanwhile (Cut, Partition or Close).
func (p *Proxy) waitThawed(l *link) bool {
	p.mu.Lock()
	thawed := p.thawed
	p.mu.Unlock()
	select {
	case <-thawed:
		return true
	case <-l.cut:
		return false
	}
}
