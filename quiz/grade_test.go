package quiz

import (
	"math"
	"testing"
)

func opts(correct ...bool) []Option {
	var out []Option
	for i, c := range correct {
		out = append(out, Option{Text: string(rune('a' + i)), Correct: c, Explain: "why " + string(rune('a'+i))})
	}
	return out
}

func items(n int) []Option {
	var out []Option
	for i := 0; i < n; i++ {
		out = append(out, Option{Text: string(rune('a' + i)), Explain: "step"})
	}
	return out
}

func TestGrade(t *testing.T) {
	single := &Question{ID: "s", Kind: Single, Options: opts(false, true, false), Takeaway: "tk"}
	predict := &Question{ID: "p", Kind: Predict, Options: opts(true, false), Experiment: "fencing"}
	multi := &Question{ID: "m", Kind: Multi, Options: opts(true, false, true, false)}
	num := &Question{ID: "n", Kind: Numeric, Answer: 19, Tolerance: 0.5, Explain: "ex"}
	exact := &Question{ID: "e", Kind: Numeric, Answer: 0.3, Tolerance: 0}
	order := &Question{ID: "o", Kind: Order, Items: items(4)}
	pair := &Question{ID: "o2", Kind: Order, Items: items(2)}

	cases := []struct {
		name    string
		q       *Question
		r       Response
		score   float64
		correct bool
	}{
		{"single right", single, Response{Picked: []int{1}}, 1, true},
		{"single wrong", single, Response{Picked: []int{0}}, 0, false},
		{"predict right", predict, Response{Picked: []int{0}}, 1, true},
		{"predict wrong", predict, Response{Picked: []int{1}}, 0, false},
		{"multi exact", multi, Response{Picked: []int{2, 0}}, 1, true},
		{"multi one missed", multi, Response{Picked: []int{0}}, 0.75, false},
		{"multi one extra", multi, Response{Picked: []int{0, 1, 2}}, 0.75, false},
		{"multi all ticked", multi, Response{Picked: []int{0, 1, 2, 3}}, 0.5, false},
		{"multi none ticked", multi, Response{}, 0.5, false},
		{"multi exactly wrong", multi, Response{Picked: []int{1, 3}}, 0, false},
		{"numeric exact", num, Response{Number: 19}, 1, true},
		{"numeric at upper edge", num, Response{Number: 19.5}, 1, true},
		{"numeric at lower edge", num, Response{Number: 18.5}, 1, true},
		{"numeric just outside", num, Response{Number: 19.51}, 0, false},
		{"numeric far", num, Response{Number: -19}, 0, false},
		{"exact with rounding", exact, Response{Number: 0.1 + 0.2}, 1, true},
		{"exact off", exact, Response{Number: 0.31}, 0, false},
		{"order right", order, Response{Order: []int{0, 1, 2, 3}}, 1, true},
		{"order reversed", order, Response{Order: []int{3, 2, 1, 0}}, 0, false},
		{"order one swap", order, Response{Order: []int{1, 0, 2, 3}}, 1.0 / 3, false},
		{"order last moved first", order, Response{Order: []int{3, 0, 1, 2}}, 1.0 / 3, false},
		{"order middle swap", order, Response{Order: []int{0, 2, 1, 3}}, 1.0 / 3, false},
		{"order two items wrong", pair, Response{Order: []int{1, 0}}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Grade(tc.q, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.Score-tc.score) > 1e-12 || res.Correct != tc.correct {
				t.Errorf("score %v correct %v, want %v %v", res.Score, res.Correct, tc.score, tc.correct)
			}
			if res.Takeaway != tc.q.Takeaway {
				t.Errorf("takeaway %q", res.Takeaway)
			}
		})
	}
}

func TestGradeFeedback(t *testing.T) {
	multi := &Question{ID: "m", Kind: Multi, Options: opts(true, false, true)}
	res, err := Grade(multi, Response{Picked: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Feedback{
		{Text: "a", Explain: "why a", Correct: true, Picked: false, Position: -1, Want: -1},
		{Text: "b", Explain: "why b", Correct: false, Picked: true, Position: -1, Want: -1},
		{Text: "c", Explain: "why c", Correct: true, Picked: true, Position: -1, Want: -1},
	}
	if len(res.Options) != len(want) {
		t.Fatalf("feedback %+v", res.Options)
	}
	for i := range want {
		if res.Options[i] != want[i] {
			t.Errorf("option %d: %+v, want %+v", i, res.Options[i], want[i])
		}
	}

	order := &Question{ID: "o", Kind: Order, Items: items(3)}
	res, err = Grade(order, Response{Order: []int{0, 2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range res.Options {
		wantPos := []int{0, 2, 1}[i]
		if f.Want != i || f.Position != wantPos || f.Correct != (i == 0) {
			t.Errorf("item %d: %+v", i, f)
		}
	}
	num := &Question{ID: "n", Kind: Numeric, Answer: 2, Explain: "majority", Takeaway: "tk"}
	if res, _ := Grade(num, Response{Number: 2}); res.Explain != "majority" || res.Options != nil {
		t.Errorf("numeric feedback %+v", res)
	}
}

func TestGradeInvalid(t *testing.T) {
	single := &Question{ID: "s", Kind: Single, Options: opts(true, false)}
	multi := &Question{ID: "m", Kind: Multi, Options: opts(true, false)}
	order := &Question{ID: "o", Kind: Order, Items: items(3)}
	num := &Question{ID: "n", Kind: Numeric, Answer: 1}
	cases := []struct {
		name string
		q    *Question
		r    Response
	}{
		{"single none", single, Response{}},
		{"single two", single, Response{Picked: []int{0, 1}}},
		{"single out of range", single, Response{Picked: []int{2}}},
		{"single negative", single, Response{Picked: []int{-1}}},
		{"multi duplicate", multi, Response{Picked: []int{0, 0}}},
		{"multi out of range", multi, Response{Picked: []int{5}}},
		{"order short", order, Response{Order: []int{0, 1}}},
		{"order repeated", order, Response{Order: []int{0, 1, 1}}},
		{"order out of range", order, Response{Order: []int{0, 1, 3}}},
		{"numeric NaN", num, Response{Number: math.NaN()}},
		{"numeric Inf", num, Response{Number: math.Inf(1)}},
		{"unknown kind", &Question{ID: "x", Kind: "essay"}, Response{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Grade(tc.q, tc.r); err == nil {
				t.Errorf("Grade accepted %+v", tc.r)
			}
		})
	}
}

func TestResponseText(t *testing.T) {
	for _, c := range []struct {
		q    *Question
		r    Response
		want string
	}{
		{&Question{Kind: Single}, Response{Picked: []int{1}}, "2"},
		{&Question{Kind: Multi}, Response{Picked: []int{0, 2}}, "1,3"},
		{&Question{Kind: Multi}, Response{}, "none"},
		{&Question{Kind: Order}, Response{Order: []int{2, 0, 1}}, "3 1 2"},
		{&Question{Kind: Numeric}, Response{Number: 12.5}, "12.5"},
	} {
		if got := c.r.Text(c.q); got != c.want {
			t.Errorf("%v %+v: %q, want %q", c.q.Kind, c.r, got, c.want)
		}
	}
}
