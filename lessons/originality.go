package lessons

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// RunWords is the length of a run of words that a lesson may not share
// with the documents the course was written from: shorter runs are
// common phrases ("the lease is revoked when"), longer ones are copying.
const RunWords = 8

// SeedPrints are the fingerprints of every run of RunWords words in the
// source documents, each with the name of a document it comes from.
type SeedPrints map[uint64]string

//go:embed seedprints.txt
var builtInPrints string

// BuiltInSeedPrints are the fingerprints of the built-in course's source
// documents (only hashes are kept in the repository, never their text).
// `go run ./internal/tools/seedprints DIR` writes the file again.
func BuiltInSeedPrints() SeedPrints {
	p := SeedPrints{}
	for _, line := range strings.Split(builtInPrints, "\n") {
		h, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.HasPrefix(h, "#") {
			continue
		}
		if v, err := strconv.ParseUint(h, 16, 64); err == nil {
			p[v] = name
		}
	}
	return p
}

// PrintSeeds fingerprints documents given by name.
func PrintSeeds(texts map[string]string) SeedPrints {
	p := SeedPrints{}
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ws := words(texts[n])
		for i := 0; i+RunWords <= len(ws); i++ {
			if _, seen := p[runPrint(ws[i:i+RunWords])]; !seen {
				p[runPrint(ws[i:i+RunWords])] = n
			}
		}
	}
	return p
}

// Format writes the fingerprints one a line, sorted, as seedprints.txt
// holds them.
func (p SeedPrints) Format() string {
	keys := make([]uint64, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var b strings.Builder
	b.WriteString("# fingerprints (FNV-64a) of every run of 8 words in the course's source documents\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%016x %s\n", k, p[k])
	}
	return b.String()
}

// word is one normalised word and the line it starts on.
type word struct {
	w    string
	line int
}

// words splits text into lower-case words of letters and digits; every
// other character (punctuation, Markdown and YAML markup) separates
// words, except apostrophes, which are dropped ("don't" is "dont").
func words(text string) []word {
	var out []word
	var cur strings.Builder
	line, start := 1, 1
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, word{cur.String(), start})
			cur.Reset()
		}
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if cur.Len() == 0 {
				start = line
			}
			cur.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
		default:
			flush()
		}
		if r == '\n' {
			line++
		}
	}
	flush()
	return out
}

func runPrint(ws []word) uint64 {
	h := fnv.New64a()
	for i, w := range ws {
		if i > 0 {
			h.Write([]byte{' '})
		}
		h.Write([]byte(w.w))
	}
	return h.Sum64()
}

// Originality reports every run of RunWords or more words that a lesson
// or quiz file shares with the source documents, at the line where the
// run starts (case and punctuation do not count).
func Originality(fsys fs.FS, c *Course, prints SeedPrints) ([]Problem, error) {
	var probs []Problem
	for _, l := range c.Lessons {
		files := []struct{ name, shown string }{{"lesson.md", l.Path}}
		if l.Quiz != nil {
			files = append(files, struct{ name, shown string }{"quiz.yaml", l.Quiz.Path})
		}
		for _, f := range files {
			b, err := fs.ReadFile(fsys, path.Join(l.Dir, f.name))
			if err != nil {
				return nil, err
			}
			probs = append(probs, sharedRuns(string(b), f.shown, prints)...)
		}
	}
	return probs, nil
}

// sharedRuns finds the runs of text that prints know, longest first at
// each place: overlapping matches make one run.
func sharedRuns(text, shown string, prints SeedPrints) []Problem {
	ws := words(text)
	var probs []Problem
	for i := 0; i+RunWords <= len(ws); {
		seed, ok := prints[runPrint(ws[i:i+RunWords])]
		if !ok {
			i++
			continue
		}
		end := i + RunWords
		for end < len(ws) {
			if _, more := prints[runPrint(ws[end-RunWords+1:end+1])]; !more {
				break
			}
			end++
		}
		probs = append(probs, Problem{Path: shown, Line: ws[i].line,
			Msg: fmt.Sprintf("%d words in a row are the same as in source document %s (%q): write it in your own words",
				end-i, seed, quoteWords(ws[i:end]))})
		i = end
	}
	return probs
}

func quoteWords(ws []word) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, w.w)
	}
	return strings.Join(parts, " ")
}
