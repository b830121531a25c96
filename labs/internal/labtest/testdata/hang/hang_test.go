// Package hang is a fixture: a test that never ends, under labtest.Main.
package hang

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/labs/internal/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m, 2*time.Second) }

func TestStep1_Forever(t *testing.T) {
	for {
		time.Sleep(time.Millisecond)
	}
}
