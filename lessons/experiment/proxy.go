package experiment

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// FaultProxy forwards one loopback port to an etcd endpoint and can freeze
// the traffic (a pause: bytes wait, connections stay open), drop it (a
// partition: connections are cut and new ones refused until healed) or
// stall it for a while (network jitter). Every replica has its own, so a
// fault hits exactly one replica.
type FaultProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	frozen  bool
	thawed  chan struct{} // closed when the proxy is not frozen
	dropped bool
	closed  bool
	conns   map[net.Conn]struct{}
}

// NewFaultProxy listens on a free loopback port and forwards to target
// ("host:port").
func NewFaultProxy(target string) (*FaultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fault proxy for %s: %w", target, err)
	}
	p := &FaultProxy{ln: ln, target: target, thawed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.thawed)
	go p.serve()
	return p, nil
}

// Addr is where clients connect ("127.0.0.1:port").
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

func (p *FaultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *FaultProxy) pipe(in net.Conn) {
	p.mu.Lock()
	refuse := p.dropped || p.closed
	p.mu.Unlock()
	if refuse {
		in.Close()
		return
	}
	out, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		in.Close()
		return
	}
	p.mu.Lock()
	if p.dropped || p.closed {
		p.mu.Unlock()
		in.Close()
		out.Close()
		return
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.copy(out, in) }()
	go func() { defer wg.Done(); p.copy(in, out) }()
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// copy forwards src to dst, holding each chunk while the proxy is frozen.
func (p *FaultProxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.waitThawed()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a cut connection: close both sides
		}
	}
}

func (p *FaultProxy) waitThawed() {
	p.mu.Lock()
	ch := p.thawed
	p.mu.Unlock()
	<-ch
}

// Freeze holds all traffic until Thaw; connections stay open, as they do
// for a process stopped by a long GC pause.
func (p *FaultProxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen = true
		p.thawed = make(chan struct{})
	}
}

// Thaw lets held traffic through.
func (p *FaultProxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		p.frozen = false
		close(p.thawed)
	}
}

// Drop cuts every connection and refuses new ones until Heal.
func (p *FaultProxy) Drop() {
	p.mu.Lock()
	p.dropped = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// Heal accepts connections again after Drop.
func (p *FaultProxy) Heal() {
	p.mu.Lock()
	p.dropped = false
	p.mu.Unlock()
}

// Close stops the proxy and cuts its connections.
func (p *FaultProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	if p.frozen {
		p.frozen = false
		close(p.thawed)
	}
	p.mu.Unlock()
	p.Drop()
	return p.ln.Close()
}
