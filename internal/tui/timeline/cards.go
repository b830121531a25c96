package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// Replica cards: what one replica (or etcd member) believes at an
// instant, in a small box: name and role, token or term and the faults
// it is under, and the lease it thinks it has left. The experiment
// screen and the lab screen's runs of the learner's code draw the same
// cards from the same states (Model.Cards), so a replica reads alike on
// both.

// CardWidth is a card's width, its border included: room for
// "▸b10 stepped down".
const CardWidth = 21

// Card draws r as a card; selected marks the replica the fault keys act
// on (▸).
func Card(st theme.Styles, r history.ReplicaState, selected bool) string {
	name := r.Name
	if selected {
		name = st.Selected.Render("▸" + r.Name)
	} else {
		name = st.Accent.Render(" " + r.Name)
	}
	role := string(r.Role)
	switch {
	case r.Crashed:
		role = st.Error.Render(role)
	case r.Role == history.RoleOwner, r.Member && r.Role == history.RoleRaftLeader:
		role = st.Success.Render(role)
	default:
		role = st.Text.Render(role)
	}
	line1 := name + " " + role
	tok := "token -"
	switch {
	case r.Member:
		tok = fmt.Sprintf("term %d", r.Term) // an etcd member: no token
	case r.Token > 0:
		tok = fmt.Sprintf("token %d", r.Token)
	}
	var flags []string
	if r.Paused {
		flags = append(flags, "PAUSED")
	}
	if r.Partitioned {
		flags = append(flags, "CUT")
	}
	if r.ClockRate != 0 && r.ClockRate != 1 {
		flags = append(flags, fmt.Sprintf("clk%.1fx", r.ClockRate))
	}
	line2 := st.Muted.Render(tok)
	if len(flags) > 0 {
		line2 += " " + st.Warning.Render(strings.Join(flags, " "))
	}
	line3 := st.Muted.Render("no lease")
	if r.Member {
		line3 = st.Muted.Render("etcd member") // no lease of its own
	} else if r.LeaseTTL > 0 {
		line3 = bar(r.LeaseLeft, time.Duration(r.LeaseTTL)*time.Second, 5) + " " + history.LeftLabel(r.LeaseLeft)
	}
	inner := CardWidth - 4
	body := strings.Join([]string{ansi.Truncate(line1, inner, ""), ansi.Truncate(line2, inner, ""), ansi.Truncate(line3, inner, "")}, "\n")
	return st.Box.Width(CardWidth).Render(body)
}

// bar draws the time left of a lease as a draining bar.
func bar(left, ttl time.Duration, width int) string {
	if ttl <= 0 {
		return strings.Repeat("░", width)
	}
	n := int(float64(width)*float64(left)/float64(ttl) + 0.5)
	n = min(max(n, 0), width)
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}
