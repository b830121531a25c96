package experiment

import (
	"errors"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
)

// Which etcd a run uses: the screen always says so, and never moves a
// learner from a shared cluster that failed to an in-process etcd without
// asking.

// fallback is the answer to "the shared etcd failed: run here instead?".
var fallback = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "run on an in-process etcd instead"))

// runsOn says in words which etcd a run of sc on etcd uses (see
// experiment.Run's connect).
func runsOn(sc *experiment.Scenario, etcd embedetcd.Etcd) string {
	_, remote := etcd.(*embedetcd.Remote)
	switch {
	case remote:
		return "the shared etcd at " + strings.Join(etcd.Endpoints(), ",")
	case sc.NeedsCluster:
		return "an in-process 3-member etcd cluster started for this run"
	case sc.OwnClusters:
		return "in-process 3-member etcd clusters of its own, started by the run"
	case sc.NeedsOwnServer || etcd == nil:
		return "an in-process etcd started for this run"
	}
	return "the playground's in-process etcd (" + strings.Join(etcd.Endpoints(), ",") + ")"
}

// etcdReady takes the etcd that finished starting: the shared cluster the
// screen waits for (or its failure), or the playground's own for the next
// run.
func (m Model) etcdReady(msg screen.EtcdReady) Model {
	etcd, _ := msg.Etcd.(embedetcd.Etcd) // the root's; see screen.Etcd
	switch {
	case m.waiting && (msg.Err != nil || etcd == nil):
		m.waiting, m.ask = false, msg.Err
		if m.ask == nil {
			m.ask = errors.New("no etcd")
		}
	case msg.Err == nil && etcd != nil && m.opts.Etcd == nil && m.ask == nil:
		m.waiting, m.opts.Etcd = false, etcd
		m.on = runsOn(m.sc, etcd)
	}
	return m
}

// fallbackKey handles keys while the screen waits for the shared cluster
// or asks whether to run elsewhere: only y (when asking) does anything.
func (m Model) fallbackKey(k tea.KeyPressMsg) Model {
	if m.ask != nil && key.Matches(k, fallback) {
		m.ask, m.opts.Etcd = nil, nil
		m.on = runsOn(m.sc, nil)
	}
	return m
}

// sharedView is the screen while the shared cluster connects or after it
// failed; "" otherwise.
func (m Model) sharedView(w int) string {
	st := m.Styles
	switch {
	case m.ask != nil:
		return text.Wrap(st.Error.Render("The shared etcd at "+m.opts.Shared+" is not reachable: "+m.ask.Error())+"\n\n"+
			st.Text.Render("This experiment can run on an in-process etcd instead: the same etcd code, on this machine only, so nothing of it shows on the shared cluster.")+"\n\n"+
			st.Accent.Render("y")+st.Text.Render(" run it on an in-process etcd · ")+st.Accent.Render("esc")+st.Text.Render(" back"), w)
	case m.waiting:
		return st.Muted.Render(text.Wrap("Connecting to the shared etcd at "+m.opts.Shared+"; the experiment opens when it answers (esc: back).", w))
	}
	return ""
}
