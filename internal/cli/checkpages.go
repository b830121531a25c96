package cli

import (
	"fmt"
	"os"

	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// readerRender renders a page as the lesson reader does on a dark
// terminal (the default; the light style has the same margins).
func readerRender(markdown string, width int) (string, error) {
	return theme.DefaultStyles(true).RenderMarkdown(markdown, width)
}

// courseChecks are the checks of the text itself, beyond what Load finds:
// pages that do not fit two 80x24 screens, and runs of words shared with
// the source documents. For the built-in course both are problems; for a
// course of one's own (DIR or --content) a long page is a warning, and the
// originality scan runs only against the seeds given with --seeds.
func courseChecks(c *lessons.Course, src lessons.Sources, builtIn bool, seedDir string) (probs, warns []lessons.Problem, err error) {
	fit := lessons.PageFit(c, readerRender)
	if builtIn {
		probs = append(probs, fit...)
	} else {
		warns = append(warns, fit...)
	}
	prints := lessons.SeedPrints{}
	switch {
	case seedDir != "":
		texts, err := readSeeds(seedDir)
		if err != nil {
			return nil, nil, err
		}
		prints = lessons.PrintSeeds(texts)
	case builtIn:
		prints = lessons.BuiltInSeedPrints()
	}
	if len(prints) > 0 {
		found, err := lessons.Originality(src.Course, c, prints)
		if err != nil {
			return nil, nil, fmt.Errorf("originality scan: %w", err)
		}
		probs = append(probs, found...)
	}
	return probs, warns, nil
}

// readSeeds reads every .txt file of dir (the course's source documents).
func readSeeds(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read seeds: %w", err)
	}
	texts := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || len(e.Name()) < 5 || e.Name()[len(e.Name())-4:] != ".txt" {
			continue
		}
		b, err := os.ReadFile(dir + string(os.PathSeparator) + e.Name())
		if err != nil {
			return nil, fmt.Errorf("read seeds: %w", err)
		}
		texts[e.Name()] = string(b)
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("read seeds: no .txt files in %s", dir)
	}
	return texts, nil
}
