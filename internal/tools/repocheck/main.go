// Command repocheck holds the repository to the shape a newcomer can
// change (issues 26 and 32): no tracked file over 1 MB unless .large-files
// lists it with a reason; no product function over 80 lines unless
// .long-functions lists it with its owner; every package folder named in
// README.md's table of folders; and every import pointing down the ranks
// of .layers (go list), but for the known exceptions in .layer-exceptions,
// each of which must still occur. Product code is every Go file but tests
// (the tools included). make test runs it.
//
//	go run ./internal/tools/repocheck          # every check, from the repo root
//	go run ./internal/tools/repocheck -list    # every function over the limit
//	go run ./internal/tools/repocheck -layers  # every package in its rank
//	go run ./internal/tools/repocheck -changed main   # packages changed since main (make quick)
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	list := flag.Bool("list", false, "print every product function over the limit, allowed or not, and exit 0")
	changed := flag.String("changed", "", "print the packages changed since this git revision, one a line, and exit")
	layered := flag.Bool("layers", false, "print the module's packages rank by rank, as .layers places them, and exit")
	flag.Parse()
	if *layered {
		if err := printLayers(os.Stdout, "."); err != nil {
			fmt.Fprintln(os.Stderr, "repocheck:", err)
			os.Exit(2)
		}
		return
	}
	if *changed != "" {
		pkgs, err := changedPackages(".", *changed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "repocheck:", err)
			os.Exit(2)
		}
		for _, p := range pkgs {
			fmt.Println(p)
		}
		return
	}
	files, err := trackedFiles(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "repocheck:", err)
		os.Exit(2)
	}
	if *list {
		err = printLongFunctions(os.Stdout, ".", files)
	} else {
		err = run(os.Stdout, ".", files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "repocheck:", err)
		os.Exit(1)
	}
}
