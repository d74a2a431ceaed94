package indexnow

import (
	"testing"
	"time"
)

func TestPingCheck(t *testing.T) {
	ok := []string{"https://shop.test/.well-known/ai-catalog.json"}
	cases := []struct {
		name   string
		p      ping
		status int
	}{
		{"valid", ping{Host: "Shop.Test", Key: "abcd-1234", URLList: ok}, 0},
		{"port in host and URL", ping{Host: "shop.test:8443", Key: "abcd-1234", URLList: []string{"https://shop.test:8443/x"}}, 0},
		{"other port", ping{Host: "shop.test:8443", Key: "abcd-1234", URLList: []string{"https://shop.test:9443/x"}}, 422},
		{"no URLs", ping{Host: "shop.test", Key: "abcd-1234"}, 400},
		{"key too short", ping{Host: "shop.test", Key: "abc", URLList: ok}, 422},
		{"key with other characters", ping{Host: "shop.test", Key: "abcd_1234", URLList: ok}, 422},
		{"URL on another host", ping{Host: "shop.test", Key: "abcd-1234", URLList: []string{"https://evil.test/x"}}, 422},
		{"subdomain is another host", ping{Host: "shop.test", Key: "abcd-1234", URLList: []string{"https://a.shop.test/x"}}, 422},
		{"relative URL", ping{Host: "shop.test", Key: "abcd-1234", URLList: []string{"/x"}}, 400},
		{"keyLocation elsewhere", ping{Host: "shop.test", Key: "abcd-1234", KeyLocation: "https://evil.test/k.txt", URLList: ok}, 422},
	}
	for _, c := range cases {
		rej := c.p.check()
		got := 0
		if rej != nil {
			got = rej.status
		}
		if got != c.status {
			t.Errorf("%s: status %d (%v), want %d", c.name, got, rej, c.status)
		}
	}
	p := ping{Host: "shop.test", Key: "abcd-1234", URLList: ok}
	if got := p.keyURL(); got != "https://shop.test/abcd-1234.txt" {
		t.Errorf("keyURL = %s", got)
	}
}

func TestHostBudgets(t *testing.T) {
	b, err := newHostBudgets(3, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if d := b.take("a.test", now); d != 0 {
			t.Fatalf("ping %d within the burst waits %v", i, d)
		}
	}
	d := b.take("a.test", now)
	if d <= 0 || d > 20*time.Second {
		t.Fatalf("fourth ping: wait %v, want (0, 20s] at 3 per minute", d)
	}
	if d2 := b.take("a.test", now); d2 != d {
		t.Fatalf("a refused ping spent budget: wait %v then %v", d, d2)
	}
	if d := b.take("b.test", now); d != 0 {
		t.Fatalf("another host shares the budget: wait %v", d)
	}
	if d := b.take("a.test", now.Add(20*time.Second)); d != 0 {
		t.Fatalf("after 20s a token is back, but wait %v", d)
	}
}
