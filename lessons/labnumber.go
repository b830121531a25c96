package lessons

import (
	"fmt"
	"strings"
)

// The lab folders are numbered in the order the labs were written, not by
// lesson (lesson 7 lists 05, 07 and 08), so the learner sees each lab
// numbered by its lesson instead: "lab 3.1" is the first lab lesson 3
// lists. The folder id stays the lab's name for files and commands.

// LabNumber is the lab's number as the learner sees it: "3.1" for the
// first lab lesson 3 lists, "" for a lab no lesson lists.
func (c *Course) LabNumber(id string) string {
	for _, l := range c.Lessons {
		for i, lab := range l.Labs {
			if lab == id {
				return fmt.Sprintf("%d.%d", l.Number, i+1)
			}
		}
	}
	return ""
}

// LabName is how a screen names a lab: "lab 3.1", or "lab 02_lock" for a
// lab no lesson lists.
func (c *Course) LabName(id string) string {
	if n := c.LabNumber(id); n != "" {
		return "lab " + n
	}
	return "lab " + id
}

// FindLab resolves what a learner types for a lab: its number as the
// course shows it ("3.1" or "lab 3.1"), its folder id ("02_lock"), the
// folder's number ("02" or "2") or its name ("lock"). It returns nil when
// no lab, or more than one, answers to the name.
func (c *Course) FindLab(name string) *Lab {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "lab "))
	if name == "" {
		return nil
	}
	var match []*Lab
	for _, l := range c.Labs {
		num, slug, _ := strings.Cut(l.ID, "_")
		if name == l.ID || name == slug || name == num || "0"+name == num || name == c.LabNumber(l.ID) {
			match = append(match, l)
		}
	}
	if len(match) != 1 {
		return nil
	}
	return match[0]
}

// LabChoices lists every lab as the learner may name it, "3.1 (02_lock)",
// in course order, for messages that say what is accepted.
func (c *Course) LabChoices() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range c.Lessons {
		for _, id := range l.Labs {
			if c.Lab(id) != nil && !seen[id] {
				seen[id] = true
				out = append(out, c.LabNumber(id)+" ("+id+")")
			}
		}
	}
	for _, l := range c.Labs {
		if !seen[l.ID] {
			out = append(out, l.ID)
		}
	}
	return out
}
