package tui

import (
	"io/fs"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/labrun"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// LabRunner returns the factory for the lab runner screen: root is the
// learner's checkout ("" when the program runs outside one: the screen
// then explains how to get the labs) and catalog the embedded labs.
func LabRunner(root string, catalog fs.FS) LabFactory {
	return func(lab *lessons.Lab, passed bool, st theme.Styles) (Screen, tea.Cmd) {
		m := labrun.New(*lab, labrun.Options{Root: root, Catalog: catalog, Passed: passed, Styles: &st})
		return &labScreen{m: m}, m.Init()
	}
}

// labScreen adapts the lab runner to Screen.
type labScreen struct{ m labrun.Model }

func (s *labScreen) Update(msg tea.Msg) (Screen, tea.Cmd) {
	var cmd tea.Cmd
	s.m, cmd = s.m.Update(msg)
	return s, cmd
}

func (s *labScreen) View() string              { return s.m.View() }
func (s *labScreen) SetSize(w, h int)          { s.m.SetSize(w, h) }
func (s *labScreen) SetStyles(st theme.Styles) { s.m.SetStyles(st) }
func (s *labScreen) Capturing() bool           { return s.m.Capturing() }
func (s *labScreen) Close()                    { s.m.Close() }
func (s *labScreen) ShortHelp() []key.Binding  { return s.m.ShortHelp() }
func (s *labScreen) FullHelp() [][]key.Binding { return s.m.FullHelp() }
