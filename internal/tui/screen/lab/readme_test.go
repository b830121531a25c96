package lab

import (
	"testing"
)

func TestUnwrapMarkdown(t *testing.T) {
	in := "# Title\n" +
		"A paragraph that was\nwrapped by hand.\n" +
		"\n" +
		"- **First** item that\n  goes on here\n  - nested item\n- second\n" +
		"\n" +
		"```go\nfunc f() {\n\treturn\n}\n```\n" +
		"Line with a break  \nnext line\n" +
		"| a | b |\n| - | - |\n" +
		"1. one\n   more of one\n2. two\n" +
		"    code after blank? no: continues\n"
	want := "# Title\n" +
		"A paragraph that was wrapped by hand.\n" +
		"\n" +
		"- **First** item that goes on here\n  - nested item\n- second\n" +
		"\n" +
		"```go\nfunc f() {\n\treturn\n}\n```\n" +
		"Line with a break  \nnext line\n" +
		"| a | b |\n| - | - |\n" +
		"1. one more of one\n2. two code after blank? no: continues\n"
	if got := unwrapMarkdown(in); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
