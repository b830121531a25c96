// Package inithang is a fixture: a lab package whose init never returns.
package inithang

import "time"

func init() {
	for {
		time.Sleep(time.Millisecond)
	}
}
