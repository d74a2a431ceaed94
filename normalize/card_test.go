package normalize

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// realCards is the folder of real A2A agent cards the repository keeps
// (with their licence), and INDEX.tsv describing each.
const realCards = "../fixtures/realworld/a2a-cards"

// cardIndex reads INDEX.tsv: file -> name, protocol version, skill count.
func cardIndex(t *testing.T) map[string][3]string {
	t.Helper()
	f, err := os.Open(filepath.Join(realCards, "INDEX.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][3]string{}
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		cols := strings.Split(sc.Text(), "\t")
		if first || len(cols) != 5 {
			continue
		}
		out[cols[0]] = [3]string{cols[1], cols[2], cols[4]}
	}
	if len(out) != 124 {
		t.Fatalf("INDEX.tsv lists %d cards, want 124", len(out))
	}
	return out
}

// TestCardRealWorld reads every real card as if fetched from a domain's
// well-known URI: one record each, named as the card says, identified by
// its URL, with its skills and a binding for each card that names an
// endpoint.
func TestCardRealWorld(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	shapes := map[string]int{}
	for file, want := range cardIndex(t) {
		body, err := os.ReadFile(filepath.Join(realCards, file))
		if err != nil {
			t.Fatal(err)
		}
		origin := "https://" + strings.TrimSuffix(file, ".json") + ".example/.well-known/agent-card.json"
		res := Card(body, Options{Origin: origin, Via: ViaWellKnown, Now: now})
		if len(res.Records) != 1 {
			t.Errorf("%s: %d records, problems %+v", file, len(res.Records), res.Problems)
			continue
		}
		r := res.Records[0]
		eq(t, file+" identifier", r.Identifier, origin)
		eq(t, file+" url", r.URL, origin)
		eq(t, file+" type", r.Type, TypeA2A)
		eq(t, file+" displayName", r.DisplayName, want[0])
		if !r.PublisherVerified || r.Publisher != strings.TrimSuffix(file, ".json")+".example" {
			t.Errorf("%s: publisher %q verified %v", file, r.Publisher, r.PublisherVerified)
		}
		if r.Trust == nil || r.Trust.Level != TrustDomain {
			t.Errorf("%s: trust %+v, want domain", file, r.Trust)
		}
		if n, _ := strconv.Atoi(want[2]); n > 0 && len(r.SkillNames) == 0 {
			t.Errorf("%s: %d skills in the card, no skill names", file, n)
		}
		for _, v := range r.Variants {
			shapes[v]++
		}
		if r.Source.Catalog != origin || r.Source.Via != ViaWellKnown || !r.Source.FetchedAt.Equal(now) || r.ContentHash == "" {
			t.Errorf("%s: provenance %+v hash %q", file, r.Source, r.ContentHash)
		}
	}
	// Most real cards are 0.2/0.3 (a top-level url); one lists 1.0 interfaces.
	if shapes["a2a-v0.3"] < 100 || shapes["a2a-v1.0"] < 1 || shapes[VariantWellKnownCard] != 124 {
		t.Errorf("card shapes read: %v", shapes)
	}
}

func TestCardBroken(t *testing.T) {
	// The registry's JSON Schema beside the cards is JSON, but no card.
	schema, err := os.ReadFile(filepath.Join(realCards, "schemas__registry-agent.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res := Card(schema, Options{Origin: "https://schema.example/.well-known/agent.json"}); len(res.Records) != 0 {
		t.Errorf("a JSON Schema read as a card: %+v", res.Records[0])
	}

	origin := "https://broken.example/.well-known/agent.json"
	tests := []struct {
		name, body, code string
	}{
		{"truncated", `{"name": "Half", "skills": [`, CodeInvalidJSON},
		{"html", `<html><body>Not Found</body></html>`, CodeInvalidJSON},
		{"empty", ``, CodeInvalidJSON},
		{"array", `[{"name": "A"}]`, CodeNotAnObject},
		{"no name", `{"description": "who am I", "url": "https://broken.example/a2a"}`, CodeMissingField},
		{"name not a string", `{"name": 7}`, CodeMissingField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Card([]byte(tc.body), Options{Origin: origin})
			if len(res.Records) != 0 || len(res.Problems) != 1 || res.Problems[0].Code != tc.code || res.Problems[0].Severity != SeverityError {
				t.Errorf("records %d, problems %+v; want one %s error", len(res.Records), res.Problems, tc.code)
			}
		})
	}
	// A card with broken parts is kept, its problems beside it.
	res := Card([]byte(`{"name":"Partly","skills":{"a":1},"securitySchemes":{"k":3},"signatures":[{"protected":"x"}]}`), Options{Origin: origin})
	if len(res.Records) != 1 {
		t.Fatalf("records = %d", len(res.Records))
	}
	eq(t, "problems", problemKeys(res.Problems), []string{
		"warning invalid_artifact securitySchemes.k", "warning invalid_artifact signatures[0]", "warning invalid_artifact skills",
	})
}
