package quiz

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/review"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/quiz"
)

// questionKeys are the bindings for answering one question.
type questionKeys struct {
	Up, Down key.Binding
	Choose   key.Binding // number keys
	Toggle   key.Binding // space: tick (multi) or grab (order)
	MoveUp   key.Binding // order: move the item up
	MoveDown key.Binding
	Submit   key.Binding
	Erase    key.Binding // numeric: delete a character
}

func defaultQuestionKeys() questionKeys {
	return questionKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Choose:   key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "choose")),
		Toggle:   key.NewBinding(key.WithKeys("space", "x"), key.WithHelp("space", "tick")),
		MoveUp:   key.NewBinding(key.WithKeys("shift+up", "K", "ctrl+up"), key.WithHelp("K/shift+↑", "move item up")),
		MoveDown: key.NewBinding(key.WithKeys("shift+down", "J", "ctrl+down"), key.WithHelp("J/shift+↓", "move item down")),
		Submit:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "submit")),
		Erase:    key.NewBinding(key.WithKeys("backspace"), key.WithHelp("backspace", "erase")),
	}
}

// Question asks one question and shows the feedback once answered.
// Positions (cursor, ticks) are display positions; display maps them to
// option indices in file order, which is what quiz.Response wants.
type Question struct {
	q       *quiz.Question
	styles  theme.Styles
	keys    questionKeys
	display []int        // display position -> option/item index
	cursor  int          // display position (or row of the order list)
	ticked  map[int]bool // multi: display positions ticked; single: the one chosen
	order   []int        // order: item indices as the learner arranged them
	grabbed bool         // order: the item under the cursor moves with it
	input   string       // numeric: what was typed
	hint    string       // why the last submit was refused

	response *quiz.Response
	result   *quiz.Result
}

// NewQuestion asks q, its options shuffled for learner.
func NewQuestion(q *quiz.Question, learner string, st theme.Styles) Question {
	var display []int
	if q.Kind != quiz.Numeric {
		display = quiz.Shuffle(q, learner)
	}
	return NewQuestionShown(q, display, st)
}

// NewQuestionShown asks q with its options (or items) in display order:
// element i is the index of the option shown at position i (see
// quiz.Shuffle; nil for a numeric question).
func NewQuestionShown(q *quiz.Question, display []int, st theme.Styles) Question {
	m := Question{q: q, styles: st, keys: defaultQuestionKeys(), ticked: map[int]bool{}}
	if q.Kind != quiz.Numeric {
		m.display = slices.Clone(display)
	}
	if q.Kind == quiz.Order {
		m.order = slices.Clone(m.display)
	}
	return m
}

// Display is the order the options are shown in (see NewQuestionShown).
func (m Question) Display() []int { return slices.Clone(m.display) }

// Answered reports whether the question was submitted.
func (m Question) Answered() bool { return m.result != nil }

// typing is true while a numeric answer is being typed.
// Typing reports whether the question takes free text (a number).
func (m Question) Typing() bool { return m.q.Kind == quiz.Numeric && !m.Answered() }

// Update handles a key. It returns true when the learner submitted a valid
// answer with this key.
// Asked returns the question asked.
func (m Question) Asked() *quiz.Question { return m.q }

// SetStyles replaces the styles.
func (m *Question) SetStyles(st theme.Styles) { m.styles = st }

// Result is the grade of the submitted answer, nil before.
func (m Question) Result() *quiz.Result { return m.result }

// Answer is the submitted answer as the learner's progress records it;
// call it only once Answered.
func (m Question) Answer() progress.Answer {
	return progress.Answer{Response: responseText(m.q, *m.response), Score: m.result.Score, Correct: m.result.Correct}
}

// IsSubmit reports whether k is the submit key (enter).
func (m Question) IsSubmit(k tea.KeyPressMsg) bool { return key.Matches(k, m.keys.Submit) }

// Update handles a key; submitted is true when it submitted the answer.
func (m Question) Update(msg tea.Msg) (Question, bool) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || m.Answered() {
		return m, false
	}
	if key.Matches(k, m.keys.Submit) {
		return m.submit()
	}
	m.hint = ""
	switch m.q.Kind {
	case quiz.Numeric:
		switch {
		case key.Matches(k, m.keys.Erase):
			if m.input != "" {
				m.input = m.input[:len(m.input)-1]
			}
		case len(k.Text) == 1 && strings.ContainsAny(k.Text, "0123456789.-"):
			if len(m.input) < 24 {
				m.input += k.Text
			}
		}
	case quiz.Order:
		m.updateOrder(k)
	default:
		m.updateChoice(k)
	}
	return m, false
}

func (m *Question) updateChoice(k tea.KeyPressMsg) {
	n := len(m.display)
	switch {
	case key.Matches(k, m.keys.Up):
		m.cursor = (m.cursor + n - 1) % n
	case key.Matches(k, m.keys.Down):
		m.cursor = (m.cursor + 1) % n
	case key.Matches(k, m.keys.Choose):
		pos := int(k.Text[0] - '1')
		if pos >= n {
			return
		}
		m.cursor = pos
		m.pick(pos)
	case key.Matches(k, m.keys.Toggle):
		m.pick(m.cursor)
	}
}

// pick ticks (multi) or chooses (single) the option at display position pos.
func (m *Question) pick(pos int) {
	if m.q.Kind == quiz.Multi {
		m.ticked[pos] = !m.ticked[pos]
		return
	}
	clear(m.ticked)
	m.ticked[pos] = true
}

func (m *Question) updateOrder(k tea.KeyPressMsg) {
	n := len(m.order)
	move := func(d int) {
		to := m.cursor + d
		if to < 0 || to >= n {
			return
		}
		m.order[m.cursor], m.order[to] = m.order[to], m.order[m.cursor]
		m.cursor = to
	}
	switch {
	case key.Matches(k, m.keys.MoveUp):
		move(-1)
	case key.Matches(k, m.keys.MoveDown):
		move(1)
	case key.Matches(k, m.keys.Up):
		if m.grabbed {
			move(-1)
		} else {
			m.cursor = max(m.cursor-1, 0)
		}
	case key.Matches(k, m.keys.Down):
		if m.grabbed {
			move(1)
		} else {
			m.cursor = min(m.cursor+1, n-1)
		}
	case key.Matches(k, m.keys.Toggle):
		m.grabbed = !m.grabbed
	case key.Matches(k, m.keys.Choose):
		// A number puts that row's item under the cursor's place: quick
		// reordering without grabbing.
		pos := int(k.Text[0] - '1')
		if pos < n && pos != m.cursor {
			item := m.order[pos]
			m.order = slices.Delete(m.order, pos, pos+1)
			m.order = slices.Insert(m.order, m.cursor, item)
			m.cursor = min(m.cursor+1, n-1)
		}
	}
}

// submit grades the current answer if it is complete.
func (m Question) submit() (Question, bool) {
	r := quiz.Response{QuestionID: m.q.ID}
	switch m.q.Kind {
	case quiz.Numeric:
		x, err := strconv.ParseFloat(strings.TrimSpace(m.input), 64)
		if err != nil {
			m.hint = quiz.InputHint(m.q)
			return m, false
		}
		r.Number = x
	case quiz.Order:
		r.Order = slices.Clone(m.order)
	default:
		if m.q.Kind != quiz.Multi && len(m.ticked) == 0 {
			// Enter on a single choice takes the option under the cursor.
			m.ticked[m.cursor] = true
		}
		for pos := range m.display {
			if m.ticked[pos] {
				r.Picked = append(r.Picked, m.display[pos])
			}
		}
	}
	res, err := quiz.Grade(m.q, r)
	if err != nil {
		m.hint = err.Error()
		return m, false
	}
	m.response, m.result = &r, &res
	m.grabbed = false
	return m, true
}

// responseText writes the answer the way `playground quiz --plain` reads
// it, with option numbers in file order so it survives reshuffling.
func responseText(q *quiz.Question, r quiz.Response) string {
	switch q.Kind {
	case quiz.Numeric:
		return strconv.FormatFloat(r.Number, 'g', -1, 64)
	case quiz.Order:
		return joinInts(r.Order, " ")
	}
	if len(r.Picked) == 0 {
		return "none"
	}
	return joinInts(r.Picked, ",")
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x + 1)
	}
	return strings.Join(s, sep)
}

// View draws the prompt, the choices or input, and after an answer the
// feedback, wrapped to w.
// View draws the question, and the feedback once answered, w cells wide.
func (m Question) View(w int) string {
	st := m.styles
	var b strings.Builder
	b.WriteString(st.Text.Render(text.Wrap(text.Inline(text.Reflow(m.q.Prompt)), w)))
	b.WriteString("\n\n")
	if m.Answered() {
		b.WriteString(m.feedback(w))
		return b.String()
	}
	switch m.q.Kind {
	case quiz.Numeric:
		unit := ""
		if m.q.Unit != "" {
			unit = " " + m.q.Unit
		}
		b.WriteString(st.Accent.Render("> ") + st.Text.Render(m.input) + st.Cursor.Render("▏") + st.Muted.Render(unit))
	case quiz.Order:
		for row, item := range m.order {
			b.WriteString(m.row(row == m.cursor, fmt.Sprintf("%s%d. ", m.grabbedMark(row), row+1), text.Inline(m.q.Items[item].Text), w))
		}
	default:
		for pos, idx := range m.display {
			box := "( )"
			if m.q.Kind == quiz.Multi {
				box = "[ ]"
			}
			if m.ticked[pos] {
				box = "(•)"
				if m.q.Kind == quiz.Multi {
					box = "[x]"
				}
			}
			b.WriteString(m.row(pos == m.cursor, fmt.Sprintf("%d %s ", pos+1, box), text.Inline(m.q.Options[idx].Text), w))
		}
	}
	b.WriteString("\n")
	if m.hint != "" {
		b.WriteString(st.Warning.Render(text.Wrap(m.hint, w)))
	} else {
		b.WriteString(st.Muted.Render(text.Wrap(m.instructions(), w)))
	}
	return b.String()
}

func (m Question) grabbedMark(row int) string {
	if m.grabbed && row == m.cursor {
		return "≡ "
	}
	return "  "
}

// row draws one selectable line, its text hanging after the prefix.
func (m Question) row(selected bool, prefix, label string, w int) string {
	st := m.styles
	cursor := "  "
	if selected {
		cursor = "› "
	}
	body := text.Hang(cursor+prefix, label, w)
	if selected {
		return st.Selected.Render(body) + "\n"
	}
	return st.Text.Render(body) + "\n"
}

func (m Question) instructions() string {
	switch m.q.Kind {
	case quiz.Multi:
		return "Tick every option that applies with its number or space, then press enter."
	case quiz.Numeric:
		return "Type a number and press enter."
	case quiz.Order:
		return "Put the events in order, first at the top: space grabs the item under the cursor and ↑/↓ move it (or K/J), then press enter."
	}
	return "Choose with a number or ↑/↓, then press enter."
}

// feedback explains every option, marks what was right, and ends with the
// takeaway.
func (m Question) feedback(w int) string {
	st := m.styles
	res := m.result
	var b strings.Builder
	switch {
	case res.Correct:
		b.WriteString(st.Success.Render("✓ Correct."))
	case res.Score > 0:
		b.WriteString(st.Warning.Render(fmt.Sprintf("◐ Partly right: %d%% of the marks.", int(res.Score*100+0.5))))
	default:
		b.WriteString(st.Error.Render("✗ Not quite."))
	}
	if !res.Correct {
		// Every miss is scheduled for review; saying so turns it from a
		// verdict into a date.
		b.WriteString(st.Muted.Render(" It comes back for review in " + waitText(review.Intervals[0]) + "."))
	}
	b.WriteString("\n\n")
	switch m.q.Kind {
	case quiz.Numeric:
		unit := ""
		if m.q.Unit != "" {
			unit = " " + m.q.Unit
		}
		ans := strconv.FormatFloat(m.q.Answer, 'g', -1, 64)
		if m.q.Tolerance > 0 {
			ans += " ± " + strconv.FormatFloat(m.q.Tolerance, 'g', -1, 64)
		}
		fmt.Fprintf(&b, "%s\n", st.Text.Render(text.Wrap(fmt.Sprintf("You answered %s%s; the answer is %s%s.",
			strconv.FormatFloat(m.response.Number, 'g', -1, 64), unit, ans, unit), w)))
		if res.Explain != "" {
			b.WriteString(st.Muted.Render(text.Wrap(res.Explain, w)) + "\n")
		}
	case quiz.Order:
		b.WriteString(st.Heading.Render("The right order") + "\n")
		for i, f := range res.Options {
			mark, style := "✓", st.Success
			note := ""
			if !f.Correct {
				mark, style = "✗", st.Error
				note = fmt.Sprintf(" (you put it at %d)", f.Position+1)
			}
			b.WriteString(style.Render(text.Hang(fmt.Sprintf("%s %d. ", mark, i+1), f.Text+note, w)) + "\n")
			if f.Explain != "" {
				b.WriteString(st.Muted.Render(text.Hang("     ", f.Explain, w)) + "\n")
			}
		}
	default:
		for pos, idx := range m.display {
			f := res.Options[idx]
			mark, style := " ", st.Text
			switch {
			case f.Correct && f.Picked:
				mark, style = "✓", st.Success
			case f.Correct:
				mark, style = "✓", st.Warning // right answer the learner missed
			case f.Picked:
				mark, style = "✗", st.Error
			}
			picked := "  "
			if f.Picked {
				picked = "→ "
			}
			b.WriteString(style.Render(text.Hang(fmt.Sprintf("%s%s %d ", picked, mark, pos+1), f.Text, w)) + "\n")
			if f.Explain != "" {
				b.WriteString(st.Muted.Render(text.Hang("       ", f.Explain, w)) + "\n")
			}
		}
		b.WriteString(st.Muted.Render("→ your choice · ✓ right answer") + "\n")
	}
	if res.Takeaway != "" {
		b.WriteString("\n" + st.Accent.Render("Takeaway: ") + st.Text.Render(text.Wrap(res.Takeaway, max(w-10, 10))))
	}
	return b.String()
}

// ShortHelp is the one-line key help for answering.
func (m Question) ShortHelp() []key.Binding {
	switch m.q.Kind {
	case quiz.Numeric:
		return []key.Binding{m.keys.Submit}
	case quiz.Order:
		grab := m.keys.Toggle
		grab.SetHelp("space", "grab/drop")
		return []key.Binding{m.keys.Up, m.keys.Down, grab, m.keys.MoveUp, m.keys.Submit}
	case quiz.Multi:
		return []key.Binding{m.keys.Choose, m.keys.Toggle, m.keys.Submit}
	}
	return []key.Binding{m.keys.Choose, m.keys.Up, m.keys.Down, m.keys.Submit}
}

// FullHelp is every key for answering.
func (m Question) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{m.keys.Up, m.keys.Down, m.keys.Choose},
		{m.keys.Toggle, m.keys.MoveUp, m.keys.MoveDown, m.keys.Erase},
		{m.keys.Submit},
	}
}

// Cursor is the display row under the cursor.
func (m Question) Cursor() int { return m.cursor }

// Arrangement is the order question's items as the learner has arranged
// them (item indices in file order).
func (m Question) Arrangement() []int { return m.order }
