package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/ownership-election/playground/internal/grade"
)

// announceVerify says that a verification starts and, when it is the
// lab's first (no race build kept), why it takes longer. On a terminal it
// then counts the seconds on one line until the returned stop is called;
// stop prints how long it took either way.
func announceVerify(w io.Writer, o grade.Options) (stop func()) {
	fmt.Fprintf(w, "  no step failed in a first run; a pass needs %d more under the race detector\n", grade.VerifyCount)
	fmt.Fprintf(w, "  verifying: %d more runs under the race detector...\n", grade.VerifyCount)
	if !grade.RaceBuildKept(o) {
		fmt.Fprintf(w, "  (%s)\n", grade.FirstVerifyNote)
	}
	start := time.Now()
	done := make(chan struct{})
	ended := make(chan struct{})
	tty := isTerminalWriter(w)
	go func() {
		defer close(ended)
		if !tty {
			<-done
			return
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
				fmt.Fprintf(w, "\r  verifying... %ds", int(time.Since(start).Seconds()))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		fmt.Fprintf(w, "  verification took %.1fs\n", time.Since(start).Seconds())
	}
}
