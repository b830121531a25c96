package labrun

import (
	"strings"
	"testing"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/lessons"
)

// A lab run's title numbers the lab as the course does (lesson 7's labs
// are 7.1, 7.2, 7.3), never by its folder.
func TestLabTitlesAreNumberedByTheCourse(t *testing.T) {
	c := lessons.Outline(content.Sources())
	for _, id := range IDs() {
		n := c.LabNumber(id)
		if n == "" {
			t.Errorf("no lesson lists lab %s", id)
			continue
		}
		title := Scenario(id).Title
		if want := "Lab " + n + " as the replicas: "; !strings.HasPrefix(title, want) || strings.Count(title, " as the replicas") != 1 {
			t.Errorf("lab %s's run is titled %q, want it to begin %q", id, title, want)
		}
		if LookupScenario(ScenarioName(id)).Title != title {
			t.Errorf("lab %s: a replay's scenario is titled %q, the run's %q", id, LookupScenario(ScenarioName(id)).Title, title)
		}
	}
}
