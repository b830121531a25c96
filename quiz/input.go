package quiz

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseInput reads a typed answer, as in `playground quiz --plain`: "2"
// (single, predict), "1,3" or "1 3" or "none" (multi), "12.5" with or
// without the unit (numeric), "3 1 2" (order: the displayed numbers, first
// event first). Numbers refer to display positions, 1-based; display is
// the order from Shuffle. The error is a one-line hint for the learner.
func ParseInput(q *Question, display []int, input string) (Response, error) {
	r := Response{QuestionID: q.ID}
	in := strings.TrimSpace(input)
	if in == "" {
		return r, fmt.Errorf("%s", InputHint(q))
	}
	switch q.Kind {
	case Numeric:
		s := strings.TrimSpace(strings.TrimSuffix(in, q.Unit))
		if q.Unit == "" || s == in {
			s = in
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return r, fmt.Errorf("%s", InputHint(q))
		}
		r.Number = x
		return r, Validate(q, r)
	case Multi:
		if strings.EqualFold(in, "none") {
			return r, nil
		}
	}
	nums, err := numbers(in, len(display))
	if err != nil {
		return r, fmt.Errorf("%v; %s", err, InputHint(q))
	}
	idx := make([]int, len(nums))
	for i, k := range nums {
		idx[i] = display[k-1]
	}
	if q.Kind == Order {
		r.Order = idx
	} else {
		r.Picked = idx
	}
	if err := Validate(q, r); err != nil {
		return r, fmt.Errorf("%v; %s", err, InputHint(q))
	}
	return r, nil
}

// numbers splits "1,3", "1 3" or "3, 1, 2" into 1-based numbers up to max.
func numbers(in string, max int) ([]int, error) {
	fields := strings.FieldsFunc(in, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	var out []int
	for _, f := range fields {
		k, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", f)
		}
		if k < 1 || k > max {
			return nil, fmt.Errorf("%d is not between 1 and %d", k, max)
		}
		out = append(out, k)
	}
	return out, nil
}

// InputHint says in one line what a typed answer to q looks like.
func InputHint(q *Question) string {
	n := q.Choices()
	switch q.Kind {
	case Single, Predict:
		return fmt.Sprintf("type one number from 1 to %d", n)
	case Multi:
		return fmt.Sprintf("type every number that applies, like 1,3 (from 1 to %d), or none", n)
	case Order:
		return fmt.Sprintf("type all numbers 1 to %d in the right order, like 3 1 2", n)
	case Numeric:
		if q.Unit != "" {
			return fmt.Sprintf("type a number (in %s), like 12.5", q.Unit)
		}
		return "type a number, like 12.5"
	}
	return "unknown question kind"
}
