package etcdharness

import (
	"net"
	"sync"
)

// Proxy is a loopback TCP proxy in front of etcd for one replica's client.
// Freeze stops bytes flowing in both directions while keeping connections
// open, which is what a network partition or a long pause looks like from
// etcd's side: the replica's keepalives stop arriving and its lease runs
// out, and the replica hears nothing back. Unfreeze lets the held bytes
// through again.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	open   chan struct{} // closed while traffic flows
	closed chan struct{}
	conns  map[net.Conn]struct{}
	done   bool
}

// NewProxy listens on an ephemeral loopback port and forwards every
// connection to target (host:port).
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		ln:     ln,
		target: target,
		open:   make(chan struct{}),
		closed: make(chan struct{}),
		conns:  map[net.Conn]struct{}{},
	}
	close(p.open)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port; clients dial it instead of etcd.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Freeze holds every byte in both directions until Unfreeze.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // already frozen
	}
}

// Unfreeze lets traffic flow again, held bytes first.
func (p *Proxy) Unfreeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// Frozen reports whether traffic is held.
func (p *Proxy) Frozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		return false
	default:
		return true
	}
}

// Close stops listening and cuts every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	p.done = true
	close(p.closed)
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.ln.Close()
}

func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(in)
	}
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *Proxy) pipe(in net.Conn) {
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		in.Close()
		return
	}
	if !p.track(in, out) {
		in.Close()
		out.Close()
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { p.copy(out, in) })
	wg.Go(func() { p.copy(in, out) })
	wg.Wait()
	p.untrack(in, out)
}

// copy forwards src to dst, waiting at the gate before every write.
func (p *Proxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while the proxy is frozen; false means it was closed.
func (p *Proxy) wait() bool {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	select {
	case <-open:
		return true
	case <-p.closed:
		return false
	}
}
