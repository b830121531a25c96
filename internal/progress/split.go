package progress

import "slices"

// PageHome is where a page of a lesson that was split now lives: a lesson
// id and a zero-based page index.
type PageHome struct {
	Lesson string
	Page   int
}

// SplitLesson says where a split lesson's pages and checkpoint questions
// went. Question ids never change, so a review card needs no moving; the
// page a checkpoint sits on does.
type SplitLesson struct {
	// Pages is the new home of each old page, by the old page index.
	Pages []PageHome
	// Titles are the old pages' headings, by the same index; a test holds
	// each to the heading its new home has.
	Titles []string
}

// SplitLessons lists the lessons that were split, by their old id.
// Lesson 11 "timing-sessions-and-fencing" became lessons 11 and 12, and
// three of its pages went to the ends of lessons 8 and 10 (at the end, so
// the saved page numbers of those lessons stay right).
func SplitLessons() map[string]SplitLesson {
	const timing, fencing = "timing-and-system-models", "fencing-beyond-one-store"
	const coordinators, failures = "other-coordinators", "failure-modes-and-security"
	return map[string]SplitLesson{
		"timing-sessions-and-fencing": {
			Pages: []PageHome{
				{timing, 0}, {timing, 1}, {timing, 2}, {timing, 3}, {timing, 4}, {timing, 5},
				{coordinators, 7},
				{fencing, 0}, {fencing, 1}, {fencing, 2}, {fencing, 3}, {fencing, 4},
				{coordinators, 8},
				{failures, 14},
			},
			Titles: []string{
				"System models: what a design may assume",
				"Safety and liveness",
				"Lease math with a drift bound",
				"What a drift bound does not cover",
				"Redlock: timing without a token",
				"Leases for reads: ReadIndex or a leader lease",
				"ZooKeeper sessions: Disconnected is not Expired",
				"Fencing more than one resource",
				"Keep the highest token with the data",
				"Fencing in Kafka: epochs and generations",
				"Output and position in one transaction",
				"STONITH and I/O fencing",
				"client-go: the knobs that bite",
				"A Campaign that outlives its auth token",
			},
		},
	}
}

// moveSplitLessons files what was saved under a split lesson's old id
// under the lessons its pages went to: pages read, the place to continue,
// and checkpoint answers (each goes with the page that asks it). Its quiz
// attempts stay under the old id, where nothing reads them but nothing
// loses them either: their questions are now spread over several quizzes,
// and a missed one still comes back in review, which goes by question id.
// The old record goes once nothing else is left in it, so running this
// again moves nothing twice.
func (p *Progress) moveSplitLessons() {
	for old, split := range SplitLessons() {
		ol := p.Lessons[old]
		if ol == nil {
			continue
		}
		had := map[string]bool{}
		for _, h := range split.Pages {
			_, had[h.Lesson] = p.Lessons[h.Lesson]
		}
		for _, pg := range ol.PagesRead {
			if pg < len(split.Pages) {
				h := split.Pages[pg]
				l := p.Lesson(h.Lesson)
				if i, found := slices.BinarySearch(l.PagesRead, h.Page); !found {
					l.PagesRead = slices.Insert(l.PagesRead, i, h.Page)
				}
			}
		}
		// The place to continue in a lesson the learner had not opened
		// under its new id is where they were in the old one.
		if ol.LastPage < len(split.Pages) {
			if h := split.Pages[ol.LastPage]; !had[h.Lesson] && p.Lessons[h.Lesson] != nil {
				p.Lessons[h.Lesson].LastPage = h.Page
			}
		}
		if p.Last.Lesson == old {
			pg := p.Last.Page
			p.Last = Position{}
			if pg >= 0 && pg < len(split.Pages) {
				p.Last = Position{Lesson: split.Pages[pg].Lesson, Page: split.Pages[pg].Page}
			}
		}
		p.moveChecks(ol, CheckHomes())
		ol.PagesRead, ol.LastPage, ol.Checks = nil, 0, nil
		if ol.Quiz == nil && ol.FirstQuiz == nil && len(ol.LabsPassed) == 0 {
			delete(p.Lessons, old)
		}
	}
}

// moveChecks moves ol's checkpoint answers to the lesson that asks each
// question now; an answer already there is kept if it is the newer one.
func (p *Progress) moveChecks(ol *Lesson, homes map[string]string) {
	for id, a := range ol.Checks {
		home, ok := homes[id]
		if !ok {
			continue
		}
		l := p.Lesson(home)
		if l.Checks == nil {
			l.Checks = map[string]Answer{}
		}
		if cur, ok := l.Checks[id]; !ok || a.At.After(cur.At) {
			l.Checks[id] = a
		}
	}
}

// CheckHomes is the lesson that now asks each checkpoint question of a
// split lesson, by question id.
func CheckHomes() map[string]string {
	return map[string]string{
		"l11-timing-for-safety": "timing-and-system-models",
		"l11-drift-margin":      "timing-and-system-models",
		"l11-redlock-predict":   "timing-and-system-models",
		"l11-read-path":         "timing-and-system-models",
		"l11-zk-disconnected":   "other-coordinators",
		"l11-two-resources":     "fencing-beyond-one-store",
		"l11-outbox-crash":      "fencing-beyond-one-store",
		"l11-client-go-exit":    "other-coordinators",
	}
}
