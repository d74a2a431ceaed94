package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
)

type countSink struct{ n int }

func (c *countSink) Put(context.Context, normalize.CatalogResult) error { c.n++; return nil }

func TestRefreshTap(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sink := &countSink{}
	book := federation.NewBook(netguard.New(netguard.Config{AllowPrivate: true}))
	tap := &refreshTap{sink: sink, now: func() time.Time { return now }, book: book}
	ctx, w := tap.watch(t.Context())
	other, w2 := tap.watch(t.Context())

	put := func(ctx context.Context, res normalize.CatalogResult) {
		t.Helper()
		if err := tap.Put(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	put(ctx, normalize.CatalogResult{Status: normalize.StatusOK, MaxAge: 30 * time.Minute, Records: []normalize.Record{
		{Identifier: "urn:ai:a.test:agent:x", ExpiresAt: now.Add(10 * time.Minute).Format(time.RFC3339)},
		{Identifier: "urn:ai:a.test:agent:old", ExpiresAt: now.Add(-time.Hour).Format(time.RFC3339)}, // expired: no hint
		{Identifier: "urn:ai:a.test:agent:bad", ExpiresAt: "soon"},
	}})
	// A failed fetch's hints do not count; another crawl's hints stay its own.
	put(ctx, normalize.CatalogResult{Status: normalize.StatusFailed, MaxAge: time.Minute})
	put(other, normalize.CatalogResult{Status: normalize.StatusNotModified, MaxAge: 2 * time.Minute})
	// Registries among the records go into the federation book.
	put(ctx, normalize.CatalogResult{Status: normalize.StatusOK, Registries: []normalize.Record{
		{Identifier: "urn:ai:a.test:registry:main", DisplayName: "A", Type: "application/ai-registry+json", URL: "https://registry.a.test/api/"},
	}})
	if got := w.soonest(); got != 10*time.Minute {
		t.Errorf("soonest refresh = %v, want 10m (the nearest expiresAt)", got)
	}
	if got := w2.soonest(); got != 2*time.Minute {
		t.Errorf("other crawl's soonest = %v, want 2m", got)
	}
	if sink.n != 4 {
		t.Errorf("sink got %d results, want every one (4)", sink.n)
	}
	regs := book.Registries()
	if len(regs) != 1 || regs[0].Endpoint != "https://registry.a.test/api/search" {
		t.Errorf("book = %+v", regs)
	}
	// Results outside a watched crawl are forwarded untouched.
	put(context.Background(), normalize.CatalogResult{Status: normalize.StatusOK, MaxAge: time.Second})
	if sink.n != 5 || w.soonest() != 10*time.Minute {
		t.Errorf("unwatched result changed a watch or was dropped")
	}
}

func TestDefaultPublicURL(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"0.0.0.0:8080", "http://localhost:8080/"},
		{"[::]:9000", "http://localhost:9000/"},
		{"[::1]:9000", "http://[::1]:9000/"},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := defaultPublicURL(a); got != tc.want {
			t.Errorf("defaultPublicURL(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}
