package lease

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/labs/internal/labtest"
)

// TestMain stops a run that hangs (an endless loop, a wait that never
// ends) after 30 s per -count, with a report naming the stuck test.
func TestMain(m *testing.M) { labtest.Main(m, 30*time.Second) }
