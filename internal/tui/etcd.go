package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/sentence"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
)

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
		srv embedetcd.Etcd
		err error
	}
)

// etcdState is the status shown on every screen.
type etcdState struct {
	phase    etcdPhase
	external bool
	logPath  string
	srv      embedetcd.Etcd
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

// status is the state in words, for the screens that show it.
func (s etcdState) status() screen.EtcdStatus {
	return screen.EtcdStatus{Detail: s.detail(), Failed: s.phase == etcdFailed}
}

// line is the status for the bottom bar, at most w cells.
func (s etcdState) line(st theme.Styles, w int) string {
	var line string
	style := st.Muted
	switch s.phase {
	case etcdOff:
		return ""
	case etcdStarting:
		if s.external {
			line = "● etcd: connecting…"
		} else {
			line = "● etcd: starting…"
		}
		style = st.Warning
	case etcdReady:
		where := strings.Join(s.srv.Endpoints(), ",")
		if s.external {
			line = "● etcd: external cluster " + where
		} else {
			line = "● etcd: ready " + where
		}
		style = st.Success
	case etcdFailed:
		line = "● etcd failed: " + sentence.FirstLine(s.err.Error())
		if s.logPath != "" {
			line += " (log: " + s.logPath + ")"
		}
		style = st.Error
	}
	return style.Render(text.Truncate(line, w))
}

// short is the etcd status in a word or two, for a status line that
// shares its room with watch mode.
func (s etcdState) short(st theme.Styles) string {
	switch s.phase {
	case etcdStarting:
		return st.Warning.Render("● etcd…")
	case etcdReady:
		return st.Success.Render("● etcd")
	case etcdFailed:
		return st.Error.Render("● etcd failed")
	}
	return ""
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
		msg := "etcd failed to start: " + sentence.FirstLine(s.err.Error())
		if s.logPath != "" {
			msg += "; see " + s.logPath
		}
		return msg
	}
	return ""
}
