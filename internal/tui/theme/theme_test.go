package theme

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

func TestNoColorStylesCarryNoColour(t *testing.T) {
	s := NewStyles(true, true)
	for name, st := range map[string]lipgloss.Style{
		"Title": s.Title, "Muted": s.Muted, "Success": s.Success, "Error": s.Error, "Selected": s.Selected,
	} {
		if _, ok := st.GetForeground().(lipgloss.NoColor); !ok {
			t.Errorf("%s foreground = %v, want NoColor", name, st.GetForeground())
		}
	}
	if !s.Selected.GetReverse() {
		t.Error("without colour the selected row must be drawn in reverse video")
	}
}

func TestLightAndDarkDiffer(t *testing.T) {
	light, dark := NewStyles(false, false), NewStyles(true, false)
	if light.Text.GetForeground() == dark.Text.GetForeground() {
		t.Error("text colour should differ between light and dark backgrounds")
	}
	if !dark.IsDark || light.IsDark {
		t.Error("IsDark not recorded")
	}
}

func TestDefaultStylesHonoursNoColorEnv(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	if !DefaultStyles(true).NoColor {
		t.Error("NO_COLOR=1 set but styles have colour")
	}
	t.Setenv("NO_COLOR", "")
	if DefaultStyles(true).NoColor {
		t.Error("NO_COLOR empty but styles have no colour")
	}
}

func TestKeyHelpIsFilledIn(t *testing.T) {
	g := DefaultGlobalKeys()
	for _, b := range []struct{ k, d string }{
		{g.Help.Help().Key, g.Help.Help().Desc}, {g.Back.Help().Key, g.Back.Help().Desc},
		{g.Quit.Help().Key, g.Quit.Help().Desc}, {g.ForceQuit.Help().Key, g.ForceQuit.Help().Desc},
	} {
		if strings.TrimSpace(b.k) == "" || strings.TrimSpace(b.d) == "" {
			t.Errorf("binding without help text: %+v", b)
		}
	}
}
