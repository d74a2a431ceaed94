package search

import "testing"

func TestPageTokens(t *testing.T) {
	p := pageTokens{key: []byte("k")}
	tok := p.encode("q1", 30)
	if off, err := p.decode("q1", tok); err != nil || off != 30 {
		t.Fatalf("round trip: %d %v", off, err)
	}
	if _, err := p.decode("q2", tok); err == nil {
		t.Fatal("token accepted for another query")
	}
	if _, err := (pageTokens{key: []byte("other")}).decode("q1", tok); err == nil {
		t.Fatal("token accepted under another key")
	}
	for _, bad := range []string{"", "v1.", "v1.a.b", "v2." + tok[3:], tok + "x", p.encode("q1", maxOffset+1)} {
		if _, err := p.decode("q1", bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
