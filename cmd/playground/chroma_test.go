package main

import (
	"strings"
	"testing"

	"charm.land/glamour/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// TestChromaLoadsLazily guards the patched chroma in third_party/chroma:
// its lexer and style registries must still be empty after the program
// has initialised (that is what keeps 20+ ms off every start), and code
// blocks must still come out highlighted once glamour renders one.
func TestChromaLoadsLazily(t *testing.T) {
	if n := len(lexers.GlobalLexerRegistry.Lexers); n > 0 {
		t.Fatalf("%d chroma lexers were registered during init: is go.mod still replacing chroma with ./third_party/chroma?", n)
	}
	if n := len(styles.Registry); n > 0 {
		t.Fatalf("%d chroma styles were registered during init", n)
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle("dark"), glamour.WithWordWrap(60))
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render("```go\nfunc main() { return }\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	// The dark style colours Go keywords; plain text would have no colour
	// change inside the word sequence "func main".
	if !strings.Contains(out, "func") || !strings.Contains(out, "\x1b[") {
		t.Fatalf("code block not highlighted: %q", out)
	}
	if lexers.Get("go") == nil || len(lexers.GlobalLexerRegistry.Lexers) < 200 {
		t.Fatalf("after a lookup the registry holds %d lexers, want the full set", len(lexers.GlobalLexerRegistry.Lexers))
	}
	if styles.Get("monokai") == styles.Fallback || styles.Fallback == nil {
		t.Fatalf("embedded styles not loaded after use")
	}
}
