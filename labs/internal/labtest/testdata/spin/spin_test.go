package spin

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/labs/internal/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m, time.Minute) }

var hint = labtest.Hint{Func: "(*Lease).Run", Says: "Run never waited between renewals"}

func TestStep1_Quick(t *testing.T) {
	labtest.Bubble(t, func(t *testing.T) {
		time.Sleep(time.Hour) // a healthy bubble: an hour of fake time at once
	}, hint)
}

func TestStep2_Spins(t *testing.T) {
	labtest.Bubble(t, func(t *testing.T) {
		done := make(chan struct{})
		go new(Lease).Run(done)
		time.Sleep(time.Minute)
		close(done)
	}, hint)
}

func TestStep3_Relocks(t *testing.T) {
	labtest.Bubble(t, func(t *testing.T) {
		new(Lease).Renew()
	}, hint)
}
