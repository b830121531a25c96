package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// GlobalLexerRegistry is the global LexerRegistry of Lexers.
//
// Patched for the playground: the XML lexers (about 250 of them) are parsed
// on the first lookup rather than while the program initialises, which
// took 15 ms or more of every start. Lexers registered from Go code before
// then are kept aside and registered after the XML ones, the order the
// original eager loading had. Use the functions of this package rather
// than this variable directly: it is complete only after the first lookup.
var GlobalLexerRegistry = chroma.NewLexerRegistry()

var (
	loadOnce  sync.Once
	loaded    bool
	early     []chroma.Lexer
	afterLoad []func()
)

// registry returns the global registry, loading the XML lexers first if
// that has not happened yet.
func registry() *chroma.LexerRegistry {
	loadOnce.Do(func() {
		paths, err := fs.Glob(embedded, "embedded/*.xml")
		if err != nil {
			panic(err)
		}
		for _, path := range paths {
			GlobalLexerRegistry.Register(chroma.MustNewXMLLexer(embedded, path))
		}
		for _, lexer := range early {
			GlobalLexerRegistry.Register(lexer)
		}
		early = nil
		loaded = true
		for _, f := range afterLoad {
			f()
		}
		afterLoad = nil
	})
	return GlobalLexerRegistry
}

// whenLoaded runs f once the XML lexers are registered (package init only).
func whenLoaded(f func()) { afterLoad = append(afterLoad, f) }

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return registry().Names(withAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return registry().Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return registry().MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return registry().Match(filename)
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	if !loaded {
		// Called from package initialisation, before any lookup: keep it
		// for after the XML lexers, but let it know its registry now.
		lexer.SetRegistry(GlobalLexerRegistry)
		early = append(early, lexer)
		return lexer
	}
	return GlobalLexerRegistry.Register(lexer)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return registry().Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{`.+`, chroma.Text, nil},
			{`\n`, chroma.Text, nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
