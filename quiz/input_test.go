package quiz

import (
	"slices"
	"testing"
)

func TestParseInput(t *testing.T) {
	single := &Question{ID: "s", Kind: Single, Options: opts(true, false, false)}
	multi := &Question{ID: "m", Kind: Multi, Options: opts(true, false, true)}
	order := &Question{ID: "o", Kind: Order, Items: items(3)}
	num := &Question{ID: "n", Kind: Numeric, Answer: 19, Unit: "s"}
	display := []int{2, 0, 1} // position 1 shows option 2, and so on

	cases := []struct {
		name   string
		q      *Question
		in     string
		picked []int
		order  []int
		number float64
		bad    bool
	}{
		{name: "single", q: single, in: "2", picked: []int{0}},
		{name: "single spaces", q: single, in: "  3 ", picked: []int{1}},
		{name: "single two", q: single, in: "1,2", bad: true},
		{name: "single zero", q: single, in: "0", bad: true},
		{name: "single too big", q: single, in: "4", bad: true},
		{name: "single word", q: single, in: "two", bad: true},
		{name: "empty", q: single, in: "", bad: true},
		{name: "multi commas", q: multi, in: "1,3", picked: []int{2, 1}},
		{name: "multi spaces", q: multi, in: "1 3", picked: []int{2, 1}},
		{name: "multi comma space", q: multi, in: "3, 1", picked: []int{1, 2}},
		{name: "multi none", q: multi, in: "none", picked: nil},
		{name: "multi repeated", q: multi, in: "1,1", bad: true},
		{name: "order", q: order, in: "3 1 2", order: []int{1, 2, 0}},
		{name: "order short", q: order, in: "3 1", bad: true},
		{name: "order repeated", q: order, in: "1 1 2", bad: true},
		{name: "numeric", q: num, in: "12.5", number: 12.5},
		{name: "numeric with unit", q: num, in: "19 s", number: 19},
		{name: "numeric unit glued", q: num, in: "19s", number: 19},
		{name: "numeric negative", q: num, in: "-3", number: -3},
		{name: "numeric text", q: num, in: "soon", bad: true},
		{name: "numeric NaN", q: num, in: "NaN", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseInput(tc.q, display, tc.in)
			if tc.bad {
				if err == nil {
					t.Errorf("accepted %q as %+v", tc.in, r)
				}
				return
			}
			if err != nil {
				t.Fatalf("rejected %q: %v", tc.in, err)
			}
			if !slices.Equal(r.Picked, tc.picked) || !slices.Equal(r.Order, tc.order) || r.Number != tc.number {
				t.Errorf("%q parsed as %+v", tc.in, r)
			}
		})
	}
}

func TestInputHint(t *testing.T) {
	for _, tc := range []struct {
		q    *Question
		want string
	}{
		{&Question{Kind: Single, Options: opts(true, false)}, "type one number from 1 to 2"},
		{&Question{Kind: Order, Items: items(3)}, "type all numbers 1 to 3 in the right order, like 3 1 2"},
		{&Question{Kind: Numeric, Unit: "%"}, "type a number (in %), like 12.5"},
	} {
		if got := InputHint(tc.q); got != tc.want {
			t.Errorf("InputHint(%s) = %q, want %q", tc.q.Kind, got, tc.want)
		}
	}
}
