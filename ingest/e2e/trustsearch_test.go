package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
)

// TestSignedOnlyEndToEnd crawls the signed publishers into a real
// Meilisearch and asks the search side for them: signedOnly and the
// trust.level filter find exactly the entries whose signature holds, in
// GET /agents, POST /search and POST /explore alike.
func TestSignedOnlyEndToEnd(t *testing.T) {
	ctx := t.Context()
	st := newStack(t, "signedonly", stackOptions{})
	w := st.w
	st.crawl(t, w.SignedSeeds())
	srv, err := searchapi.New(searchapi.Config{Index: st.index, Meili: st.s.Client, MinScore: new(int)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	type item struct {
		Identifier string          `json:"identifier"`
		Trust      normalize.Trust `json:"trust"`
	}
	do := func(method, path string, body any, out any) {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequestWithContext(ctx, method, hs.URL+path, rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: status %d", method, path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(items []item) []string {
		var out []string
		for _, it := range items {
			if it.Trust.Level != normalize.TrustSigned {
				t.Errorf("%s passed as signed with trust %+v", it.Identifier, it.Trust)
			}
			out = append(out, it.Identifier)
		}
		slices.Sort(out)
		return out
	}
	sid := fixtures.SignedIdentifier
	want := []string{sid(fixtures.SignedCaseCovered), sid(fixtures.SignedCaseObject), sid(fixtures.SignedCaseValid)}
	slices.Sort(want)

	for _, q := range []string{"signedOnly=true", "filter=" + url.QueryEscape("trust.level = signed")} {
		var list struct {
			Items []item `json:"items"`
		}
		do(http.MethodGet, "/agents?pageSize=100&"+q, nil, &list)
		if got := ids(list.Items); !slices.Equal(got, want) {
			t.Errorf("GET /agents?%s: %v, want %v", q, got, want)
		}
	}
	var all struct {
		Items []item `json:"items"`
	}
	do(http.MethodGet, "/agents?pageSize=100", nil, &all)
	var found struct {
		Results []item `json:"results"`
	}
	do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "agent", "signedOnly": true, "federation": "none"}, "pageSize": 100, "minScore": 0}, &found)
	if got := ids(found.Results); len(got) == 0 || !isSubset(got, want) {
		t.Errorf("POST /search signedOnly: %v, want some of %v", got, want)
	}
	var ex struct {
		Total  int                       `json:"total"`
		Facets map[string]map[string]int `json:"facets"`
	}
	do(http.MethodPost, "/explore", map[string]any{"facets": []string{"trust"}}, &ex)
	if ex.Facets["trust"]["signed"] != len(want) || ex.Facets["trust"]["none"] == 0 || ex.Facets["trust"]["signed"]+ex.Facets["trust"]["none"]+ex.Facets["trust"]["domain"] != ex.Total || ex.Total != len(all.Items) {
		t.Errorf("explore trust %v over %d records (%d listed)", ex.Facets["trust"], ex.Total, len(all.Items))
	}
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
