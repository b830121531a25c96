// Command seedprints writes the fingerprints of the course's source
// documents (every .txt file of DIR) to lessons/seedprints.txt, which
// `playground check` scans the built-in course against. Only hashes of
// runs of words are written, never the documents' text.
//
//	go run ./internal/tools/seedprints /work/shared/seeds > lessons/seedprints.txt
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ownership-election/playground/lessons"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: seedprints DIR > lessons/seedprints.txt")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.txt"))
	if err != nil || len(files) == 0 {
		fmt.Fprintf(os.Stderr, "seedprints: no .txt files in %s\n", os.Args[1])
		os.Exit(1)
	}
	texts := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "seedprints:", err)
			os.Exit(1)
		}
		// Short names: "000" for 000_0d8a035262fe49cf.txt.
		name, _, _ := strings.Cut(filepath.Base(f), "_")
		texts[name] = string(b)
	}
	fmt.Print(lessons.PrintSeeds(texts).Format())
}
