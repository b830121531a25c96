package kv

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestCompareAndSwapCases(t *testing.T) {
	s := New()
	if _, ok, err := s.CompareAndSwap("k", "x", "a", 0); ok || !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("absent key with expected value: ok=%v err=%v, want false, ErrKeyNotFound", ok, err)
	}
	v1, ok, err := s.CompareAndSwap("k", "", "a", 0)
	if !ok || err != nil || v1 != 1 {
		t.Fatalf("create: v=%d ok=%v err=%v", v1, ok, err)
	}
	if _, ok, err := s.CompareAndSwap("k", "", "b", 0); ok || err != nil {
		t.Fatalf("second create: ok=%v err=%v, want false, nil", ok, err)
	}
	v2, ok, _ := s.CompareAndSwap("k", "a", "b", 0)
	if !ok || v2 <= v1 {
		t.Fatalf("swap: v=%d ok=%v", v2, ok)
	}
	if e, ok := s.Get("k"); !ok || e.Value != "b" || e.Version != v2 {
		t.Fatalf("Get = %+v, %v", e, ok)
	}
}

func TestVersionedOps(t *testing.T) {
	s := New()
	v, _, _ := s.CompareAndSwap("k", "", "a", 0)
	if _, err := s.Update("k", "a", v+1, "b", 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("Update with wrong version: %v", err)
	}
	if _, err := s.Update("k", "z", v, "b", 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("Update with wrong value: %v", err)
	}
	v2, err := s.Update("k", "a", v, "b", 0)
	if err != nil || v2 <= v {
		t.Fatalf("Update: %d %v", v2, err)
	}
	if err := s.CompareAndDelete("k", "b", v); !errors.Is(err, ErrConflict) {
		t.Fatalf("CompareAndDelete old version: %v", err)
	}
	if err := s.CompareAndDelete("k", "b", v2); err != nil {
		t.Fatalf("CompareAndDelete: %v", err)
	}
	if err := s.CompareAndDelete("k", "b", v2); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("CompareAndDelete absent: %v", err)
	}
	if s.Delete("k") {
		t.Fatal("Delete of absent key reported true")
	}
	if got := s.Requests(); got != 8 {
		t.Fatalf("Requests = %d, want 8", got)
	}
}

func TestExpiryAndWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		changes, stop := s.Watch("k")
		defer stop()
		start := time.Now()
		s.CompareAndSwap("k", "", "a", 10*time.Second)
		<-changes // the write
		<-changes // the expiry
		if d := time.Since(start); d != 10*time.Second {
			t.Fatalf("expiry signalled after %v, want 10s", d)
		}
		if _, ok := s.Get("k"); ok {
			t.Fatal("key still present after its TTL")
		}
	})
}

func TestExpiryBoundaryAndRewrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		s.CompareAndSwap("k", "", "a", 10*time.Second)
		time.Sleep(5 * time.Second)
		if _, ok := s.Get("k"); !ok {
			t.Fatal("key gone before its TTL")
		}
		// A rewrite with a fresh TTL must not be cut short by the first timer.
		e, _ := s.Get("k")
		if _, err := s.Update("k", "a", e.Version, "a", 10*time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(6 * time.Second)
		if _, ok := s.Get("k"); !ok {
			t.Fatal("renewed key expired on the old deadline")
		}
		time.Sleep(4 * time.Second)
		if _, ok := s.Get("k"); ok {
			t.Fatal("key present at its deadline")
		}
	})
}

func TestHookSeesOps(t *testing.T) {
	s := New()
	var ops []Op
	s.SetHook(func(op Op) { ops = append(ops, op) })
	s.CompareAndSwap("k", "", "a", 0)
	s.Get("k")
	if len(ops) != 2 || ops[0].Kind != OpCompareAndSwap || !ops[0].OK || ops[1].Kind != OpGet || ops[1].Value != "a" {
		t.Fatalf("ops = %+v", ops)
	}
}
