package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ownership-election/playground/internal/grade"
)

// ContractFile is the file in a lab folder that lists every promise the
// lab's README and stub comments make, each with the tests that check it:
//
//	promises:
//	  - id: failed-swap-returns-zero
//	    says: A failed CompareAndSwap returns version 0 and false.
//	    from: README.md
//	    tests: [TestStep2_Swap/stale_version_fails]
//
// A test is named as go test -run names it: a top-level test, or a
// subtest at any depth ("TestX/a/b", spaces as underscores).
const ContractFile = "contract.yaml"

// contract is a lab's parsed contract.yaml.
type contract struct {
	Promises []promise `yaml:"promises"`
}

// promise is one thing the lab's text says the code does.
type promise struct {
	ID    string   `yaml:"id"`
	Says  string   `yaml:"says"`
	From  string   `yaml:"from"`
	Tests []string `yaml:"tests"`
}

var promiseID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// loadContract reads dir's contract; it returns nil and no problem when
// the lab has none.
func loadContract(dir string) (*contract, []string) {
	data, err := os.ReadFile(filepath.Join(dir, ContractFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", ContractFile, err)}
	}
	var c contract
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", ContractFile, err)}
	}
	return &c, nil
}

// contractProblems checks what can be checked without running: every
// promise is well formed and lists tests that exist, and every step test
// is listed by some promise. dir is the lab folder (for the from files),
// tests its TestStep* functions and funcs every Test* function.
func contractProblems(c *contract, dir string, tests []string, funcs map[string]bool) []string {
	var probs []string
	add := func(format string, args ...any) {
		probs = append(probs, ContractFile+": "+fmt.Sprintf(format, args...))
	}
	if len(c.Promises) == 0 {
		add("no promises")
	}
	seen := map[string]bool{}
	listed := map[string]bool{}
	for i, p := range c.Promises {
		label := fmt.Sprintf("promise %d (%s)", i+1, p.ID)
		switch {
		case !promiseID.MatchString(p.ID):
			add("%s: id must be kebab-case (a-z, 0-9, single dashes)", label)
		case seen[p.ID]:
			add("%s: id given twice", label)
		}
		seen[p.ID] = true
		if strings.TrimSpace(p.Says) == "" {
			add("%s: says nothing (what does the lab promise?)", label)
		}
		if p.From == "" {
			add("%s: no from (README.md or the stub file that makes the promise)", label)
		} else if _, err := os.Stat(filepath.Join(dir, p.From)); err != nil {
			add("%s: from %s: no such file in the lab", label, p.From)
		}
		if len(p.Tests) == 0 {
			add("%s: lists no test", label)
		}
		for _, t := range p.Tests {
			top, _, _ := strings.Cut(t, "/")
			listed[top] = true
			if !funcs[top] {
				add("%s: test %s: no function %s in the lab's tests", label, t, top)
			}
		}
	}
	for _, t := range tests {
		if !listed[t] {
			add("%s is listed by no promise (what does it check that the README or the stub promises?)", t)
		}
	}
	return probs
}

// contractRunProblems checks that every test and subtest the contract
// lists ran on the solution (res): a name that never ran is a typo, or a
// subtest that was renamed or removed.
func contractRunProblems(c *contract, res *grade.Result) []string {
	var probs []string
	for _, p := range c.Promises {
		for _, name := range p.Tests {
			top, _, sub := strings.Cut(name, "/")
			t := res.Test(top)
			switch {
			case t == nil || t.Runs == 0:
				probs = append(probs, fmt.Sprintf("%s: promise %s: %s did not run on the solution", ContractFile, p.ID, top))
			case sub && t.Subtest(name) == nil:
				probs = append(probs, fmt.Sprintf("%s: promise %s: subtest %s did not run on the solution (ran: %s)", ContractFile, p.ID, name, subtestNames(t)))
			}
		}
	}
	return probs
}

func subtestNames(t *grade.Test) string {
	if len(t.Subtests) == 0 {
		return "none"
	}
	var names []string
	for _, s := range t.Subtests {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
