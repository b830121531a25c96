// Package theme holds the playground TUI's look: one Styles value built from
// the terminal's background, and the key bindings every screen shares.
package theme

import (
	"image/color"
	"os"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles is every style the screens draw with. Build it once with
// DefaultStyles when the background colour is known and pass it down; no
// screen keeps colours of its own.
type Styles struct {
	// IsDark records which background the styles were built for.
	IsDark bool
	// NoColor is true when NO_COLOR is set: emphasis then comes from bold,
	// underline and reverse video only.
	NoColor bool

	App       lipgloss.Style // outer padding of every screen
	Title     lipgloss.Style // screen title (the lesson name, "Course map")
	Subtitle  lipgloss.Style // a line under the title
	Heading   lipgloss.Style // section heading inside a screen
	Text      lipgloss.Style // ordinary text
	Muted     lipgloss.Style // secondary text: summaries, positions, hints
	Accent    lipgloss.Style // something to look at: a key, an id
	Selected  lipgloss.Style // the highlighted row of a list
	Cursor    lipgloss.Style // the cursor mark in front of a selected row
	Success   lipgloss.Style // passed, correct, ready
	Warning   lipgloss.Style // starting, partly right, a notice
	Error     lipgloss.Style // failed, wrong
	Box       lipgloss.Style // a bordered panel (feedback, dialogs)
	StatusBar lipgloss.Style // the bottom line with position and etcd state
	Badge     lipgloss.Style // a small label such as "quiz 4/5"
	Code      lipgloss.Style // inline code, file:line

	Help help.Styles // styles for the bubbles help component

	// Raw colours, for components that take colours rather than styles
	// (spinner, progress bar).
	AccentColor  color.Color
	SuccessColor color.Color
	ErrorColor   color.Color
	MutedColor   color.Color
}

// DefaultStyles builds the styles for a dark (isDark) or light terminal
// background. When the NO_COLOR environment variable is set to anything, the
// styles carry no colours at all.
func DefaultStyles(isDark bool) Styles {
	return NewStyles(isDark, os.Getenv("NO_COLOR") != "")
}

// NewStyles is DefaultStyles with the NO_COLOR decision made by the caller;
// tests use it to be independent of the environment.
func NewStyles(isDark, noColor bool) Styles {
	ld := lipgloss.LightDark(isDark)
	var (
		fg      = ld(lipgloss.Color("#1F2328"), lipgloss.Color("#E6EDF3"))
		muted   = ld(lipgloss.Color("#57606A"), lipgloss.Color("#8B949E"))
		accent  = ld(lipgloss.Color("#6639BA"), lipgloss.Color("#B392F0"))
		title   = ld(lipgloss.Color("#0550AE"), lipgloss.Color("#79C0FF"))
		success = ld(lipgloss.Color("#116329"), lipgloss.Color("#56D364"))
		warning = ld(lipgloss.Color("#7D4E00"), lipgloss.Color("#E3B341"))
		errc    = ld(lipgloss.Color("#B42318"), lipgloss.Color("#FF7B72"))
		selBg   = ld(lipgloss.Color("#DDF4FF"), lipgloss.Color("#1F3A5F"))
		border  = ld(lipgloss.Color("#8C959F"), lipgloss.Color("#484F58"))
		barBg   = ld(lipgloss.Color("#EAEEF2"), lipgloss.Color("#161B22"))
	)
	if noColor {
		none := lipgloss.NoColor{}
		fg, muted, accent, title, success, warning, errc = none, none, none, none, none, none, none
		selBg, border, barBg = none, none, none
	}
	s := Styles{IsDark: isDark, NoColor: noColor}
	base := lipgloss.NewStyle()
	s.App = base.Padding(0, 1)
	s.Title = base.Bold(true).Foreground(title)
	s.Subtitle = base.Foreground(muted).Italic(true)
	s.Heading = base.Bold(true).Foreground(accent)
	s.Text = base.Foreground(fg)
	s.Muted = base.Foreground(muted)
	s.Accent = base.Foreground(accent).Bold(true)
	s.Selected = base.Bold(true).Foreground(fg).Background(selBg)
	s.Cursor = base.Bold(true).Foreground(accent)
	s.Success = base.Foreground(success)
	s.Warning = base.Foreground(warning)
	s.Error = base.Foreground(errc).Bold(true)
	s.Box = base.Border(lipgloss.RoundedBorder()).BorderForeground(border).Padding(0, 1)
	s.StatusBar = base.Foreground(muted).Background(barBg)
	s.Badge = base.Foreground(accent).Bold(true)
	s.Code = base.Foreground(accent)
	if noColor {
		// Without colour, the selected row and badges still need to stand out.
		s.Selected = base.Reverse(true)
		s.Title = base.Bold(true).Underline(true)
		s.Error = base.Bold(true)
	}

	// The bubbles defaults are too faint to read on some terminals, so the
	// help uses the course's own muted and accent colours.
	s.Help = help.Styles{
		Ellipsis:       base.Foreground(muted),
		ShortKey:       base.Foreground(accent).Bold(true),
		ShortDesc:      base.Foreground(muted),
		ShortSeparator: base.Foreground(border),
		FullKey:        base.Foreground(accent).Bold(true),
		FullDesc:       base.Foreground(fg),
		FullSeparator:  base.Foreground(border),
	}
	s.AccentColor, s.SuccessColor, s.ErrorColor, s.MutedColor = accent, success, errc, muted
	return s
}
