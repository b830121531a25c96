package replica

import "testing"

func TestExploreLabFrame(t *testing.T) {
	for file, want := range map[string]string{
		"/home/a/playground/labs/06_fenced_write/fenced.go": "labs/06_fenced_write/fenced.go",
		"labs/05_etcd_lock/lock.go":                         "labs/05_etcd_lock/lock.go",
		"/home/a/playground/labs/internal/etcdharness/h.go": "",
		"/home/a/playground/internal/labrun/lock05/main.go": "",
	} {
		got := ""
		if m := labFrame.FindStringSubmatch(file); m != nil {
			got = m[2]
		}
		if got != want {
			t.Errorf("%s: site file %q, want %q", file, got, want)
		}
	}
	if got := shortFunc("github.com/x/playground/labs/05_etcd_lock.(*Lock).Release"); got != "(*Lock).Release" {
		t.Errorf("shortFunc = %q", got)
	}
}

func TestExploreArmedParses(t *testing.T) {
	a, err := parseArmed(`[{"id":1,"fault":"pause","role":"owner","site":"labs/06_x/f.go:38","rpc":"Txn","n":1}]`)
	if err != nil || len(a) != 1 || a[0].Fault != "pause" || a[0].Occurrence != 1 {
		t.Fatalf("parseArmed = %+v, %v", a, err)
	}
	if _, err := parseArmed("{"); err == nil {
		t.Error("a broken -faults was read")
	}
}
