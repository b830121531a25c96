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
	code := "func main() { return }\n"
	highlighted, err := r.Render("```go\n" + code + "```\n")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := r.Render("```text\n" + code + "```\n")
	if err != nil {
		t.Fatal(err)
	}
	// Both carry the code block's own styling; only a working Go lexer
	// colours keywords differently from the rest, so the two must differ.
	if !strings.Contains(highlighted, "func") || highlighted == plain {
		t.Fatalf("Go code block not highlighted:\n%q\nplain text block:\n%q", highlighted, plain)
	}
	if lexers.Get("go") == nil || len(lexers.GlobalLexerRegistry.Lexers) < 200 {
		t.Fatalf("after a lookup the registry holds %d lexers, want the full set", len(lexers.GlobalLexerRegistry.Lexers))
	}
	if styles.Get("monokai") == styles.Fallback || styles.Fallback == nil {
		t.Fatalf("embedded styles not loaded after use")
	}
}
