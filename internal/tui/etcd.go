package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/theme"
)

// Etcd is what the TUI needs of a running etcd: where it is and how to let
// go of it. embedetcd's servers, clusters and remotes satisfy it.
type Etcd interface {
	Endpoints() []string
	Close() error
}

// EtcdStarter starts the embedded etcd, or connects to an external one.
// It runs in the background; it must honour ctx.
type EtcdStarter func(ctx context.Context) (Etcd, error)

type etcdPhase int

const (
	etcdOff etcdPhase = iota
	etcdStarting
	etcdReady
	etcdFailed
)

type (
	etcdStartMsg struct{}
	etcdReadyMsg struct {
		srv Etcd
		err error
	}
)

// etcdState is the status shown on every screen.
type etcdState struct {
	phase    etcdPhase
	external bool
	logPath  string
	srv      Etcd
	err      error
}

func newEtcdState(opts Options) etcdState {
	s := etcdState{external: opts.EtcdExternal, logPath: opts.EtcdLogPath}
	if opts.Etcd != nil {
		s.phase = etcdStarting
	}
	return s
}

func (s *etcdState) start(ctx context.Context, starter EtcdStarter) tea.Cmd {
	if starter == nil {
		return nil
	}
	s.phase = etcdStarting
	return func() tea.Msg {
		srv, err := starter(ctx)
		return etcdReadyMsg{srv: srv, err: err}
	}
}

func (s *etcdState) ready(msg etcdReadyMsg) {
	if msg.err != nil {
		s.phase, s.err = etcdFailed, msg.err
		return
	}
	s.phase, s.srv = etcdReady, msg.srv
}

// Server returns the running etcd, or nil.
func (m Model) Server() Etcd { return m.etcd.srv }

// line is the status for the bottom bar, at most w cells.
func (s etcdState) line(st theme.Styles, w int) string {
	var text string
	style := st.Muted
	switch s.phase {
	case etcdOff:
		return ""
	case etcdStarting:
		if s.external {
			text = "● etcd: connecting…"
		} else {
			text = "● etcd: starting…"
		}
		style = st.Warning
	case etcdReady:
		where := strings.Join(s.srv.Endpoints(), ",")
		if s.external {
			text = "● etcd: external cluster " + where
		} else {
			text = "● etcd: ready " + where
		}
		style = st.Success
	case etcdFailed:
		text = "● etcd failed: " + firstLine(s.err.Error())
		if s.logPath != "" {
			text += " (log: " + s.logPath + ")"
		}
		style = st.Error
	}
	return style.Render(truncate(text, w))
}

// detail is the longer etcd status for the home screen.
func (s etcdState) detail() string {
	switch s.phase {
	case etcdStarting:
		return "etcd is starting in the background; lessons and quizzes work meanwhile."
	case etcdReady:
		kind := "embedded etcd"
		if s.external {
			kind = "external etcd cluster"
		}
		return fmt.Sprintf("%s ready at %s", kind, strings.Join(s.srv.Endpoints(), ","))
	case etcdFailed:
		msg := "etcd failed to start: " + firstLine(s.err.Error())
		if s.logPath != "" {
			msg += "; see " + s.logPath
		}
		return msg
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
