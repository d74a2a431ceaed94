package probe

import (
	"slices"
	"testing"
)

func TestHostTurns(t *testing.T) {
	at := func(id, u string) entry { return entry{Identifier: id, Targets: []Target{{Kind: KindMCP, URL: u}}} }
	due := []entry{
		at("a1", "https://a.test/1"), at("a2", "https://A.test/2"), at("a3", "https://a.test/3"), at("a4", "https://a.test/4"),
		at("b1", "https://b.test/1"), at("c1", "https://c.test:8443/1"), at("b2", "https://b.test/2"),
	}
	var got []string
	for _, e := range hostTurns(due) {
		got = append(got, e.Identifier)
	}
	if want := []string{"a1", "b1", "c1", "a2", "b2", "a3", "a4"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
