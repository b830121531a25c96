package etcdharness

import (
	"strings"
	"sync"
	"testing"
)

func TestCheckTokenOrder(t *testing.T) {
	acc := func(res, who string, tok int64) Write {
		return Write{Resource: res, Writer: who, Token: tok, Accepted: true}
	}
	rej := func(res, who string, tok int64) Write {
		return Write{Resource: res, Writer: who, Token: tok}
	}
	tests := []struct {
		name    string
		writes  []Write
		wantErr string // substring; "" means valid
	}{
		{"empty", nil, ""},
		{"one leader many writes", []Write{acc("r", "a", 7), acc("r", "a", 7), acc("r", "a", 7)}, ""},
		{"handover", []Write{acc("r", "a", 7), acc("r", "b", 8), acc("r", "b", 8)}, ""},
		{"stale write rejected is fine", []Write{acc("r", "a", 7), acc("r", "b", 8), rej("r", "a", 7)}, ""},
		{"gaps in tokens are fine", []Write{acc("r", "a", 3), acc("r", "b", 40)}, ""},
		{"stale write accepted", []Write{acc("r", "a", 7), acc("r", "b", 8), acc("r", "a", 7)}, "stale owner"},
		{"stale by one resource only", []Write{acc("x", "a", 9), acc("y", "b", 2)}, ""},
		{"stale within a resource", []Write{acc("x", "a", 9), acc("y", "b", 2), acc("x", "b", 2)}, `"x"`},
		{"shared token", []Write{acc("r", "a", 7), acc("r", "b", 7)}, "shared one token"},
		{"shared token across resources is per resource", []Write{acc("x", "a", 7), acc("y", "b", 7)}, ""},
		{"rejected shared token is fine", []Write{acc("r", "a", 7), rej("r", "b", 7)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTokenOrder(tc.writes)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("valid history rejected: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("invalid history accepted, want an error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestRegisterFencesAndRecords(t *testing.T) {
	h := &History{}
	r := &Register{Name: "reg", History: h}
	if !r.Write("a", 7, "a1") || !r.Write("a", 7, "a2") {
		t.Fatal("equal tokens from the same writer must be accepted")
	}
	if !r.Write("b", 8, "b1") {
		t.Fatal("a higher token must be accepted")
	}
	if r.Write("a", 7, "late") {
		t.Fatal("a lower token must be rejected")
	}
	if v, tok := r.Value(); v != "b1" || tok != 8 {
		t.Fatalf("register holds (%q, %d), want (b1, 8)", v, tok)
	}
	ws := h.Writes()
	if len(ws) != 4 || ws[3].Accepted || !ws[2].Accepted {
		t.Fatalf("history %+v does not match the four attempts", ws)
	}
	if h.Accepted("a") != 2 || h.Accepted("b") != 1 {
		t.Fatalf("accepted counts a=%d b=%d, want 2 and 1", h.Accepted("a"), h.Accepted("b"))
	}
	if err := CheckTokenOrder(ws); err != nil {
		t.Fatalf("a fenced register produced a bad history: %v", err)
	}
}

func TestRegisterConcurrentHistoryIsOrdered(t *testing.T) {
	h := &History{}
	r := &Register{Name: "reg", History: h}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				r.Write(string(rune('a'+w)), int64(w*1000+i), "v")
			}
		})
	}
	wg.Wait()
	if err := CheckTokenOrder(h.Writes()); err != nil {
		t.Fatal(err)
	}
	if len(h.Writes()) != 8*200 {
		t.Fatalf("recorded %d writes, want %d", len(h.Writes()), 8*200)
	}
}
