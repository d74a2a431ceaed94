package main

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestCrawlReportReachesScheduleAndBook: the soonest refresh of a crawl's
// catalogs reaches the scheduler and its registries reach the book, both
// from the crawl report.
func TestCrawlReportReachesScheduleAndBook(t *testing.T) {
	book := federation.NewBook(netguard.New(netguard.Config{AllowPrivate: true}))
	rep := &crawler.Report{
		Catalogs: []crawler.CatalogReport{
			{URL: "https://a.test/.well-known/ai-catalog.json", Status: normalize.StatusOK, MaxAge: 30 * time.Minute, Refresh: 10 * time.Minute},
			{URL: "https://b.test/.well-known/ai-catalog.json", Status: normalize.StatusFailed},
			{URL: "https://c.test/.well-known/ai-catalog.json", Status: normalize.StatusNotModified, Refresh: 20 * time.Minute},
		},
		Registries: []crawler.Registry{{URL: "https://registry.a.test/api/", Via: crawler.RegistryViaCatalog,
			Identifier: "urn:ai:a.test:registry:main", DisplayName: "A"}},
		Totals: crawler.Totals{Catalogs: 3, OK: 1, NotModified: 1, Failed: 1},
	}
	res := summarize(rep)
	if res.Refresh != 10*time.Minute {
		t.Errorf("soonest refresh = %v, want 10m (the nearest expiresAt)", res.Refresh)
	}
	if res.Catalogs != 3 || res.Succeeded != 2 || res.NotModified != 1 {
		t.Errorf("summary %+v", res)
	}
	learn(book, rep.Registries, slog.New(slog.DiscardHandler))
	regs := book.Registries()
	if len(regs) != 1 || regs[0].Endpoint != "https://registry.a.test/api/search" {
		t.Errorf("book = %+v", regs)
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
