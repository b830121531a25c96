package quiz

import (
	"strconv"
	"strings"
)

// Text is the response as a learner's progress records it, in file
// order and counting from 1: "2" or "1,3" for picks ("none" for no pick),
// "3 1 2" for an order, the number for a numeric question.
func (r Response) Text(q *Question) string {
	switch q.Kind {
	case Numeric:
		return strconv.FormatFloat(r.Number, 'g', -1, 64)
	case Order:
		return joinIndices(r.Order, " ")
	}
	if len(r.Picked) == 0 {
		return "none"
	}
	return joinIndices(r.Picked, ",")
}

func joinIndices(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x + 1)
	}
	return strings.Join(s, sep)
}
