package inithang

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/labs/internal/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m, 2*time.Second) }

func TestStep1_Never(t *testing.T) {}
