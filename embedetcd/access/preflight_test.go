package access

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPreflightDoesNotWaitBehindASilentMember: the first endpoint accepts
// connections and never answers (a stopped or wedged member), the second
// is a working TLS server. One working endpoint is enough, so Preflight
// passes; tried one after the other under one budget, the silent member
// used all of it and the working one was reported unreachable.
func TestPreflightDoesNotWaitBehindASilentMember(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var held []net.Conn
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never read, never answered
		}
	}()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	s := Settings{
		Endpoints: []string{"https://" + silent.Addr().String(), srv.URL},
		CACertPEM: ca,
	}
	if err := s.Preflight(context.Background()); err != nil {
		t.Fatalf("preflight with one silent and one working member: %v", err)
	}
	// Alone, the silent member is a problem Preflight names.
	s.Endpoints = s.Endpoints[:1]
	if err := s.Preflight(context.Background()); err == nil {
		t.Fatal("preflight passed with only a silent member")
	}
}
