// Command guardcmd is playground-guard, the supervisor, judge and sandbox
// step of a grading (package guard). internal/grade builds it into the
// course's build folder and starts it; it is not meant to be run by hand.
package main

import (
	"os"

	"github.com/ownership-election/playground/internal/grade/guard"
)

func main() { os.Exit(guard.Main(os.Args[1:])) }
