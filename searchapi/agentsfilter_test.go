package searchapi

import (
	"errors"
	"testing"
)

func TestParseAndTranslateFilter(t *testing.T) {
	tests := []struct {
		in   string
		want string
		code string // expected error code instead
	}{
		{in: ``, want: ``},
		{in: `tags = weather`, want: `tags = "weather"`},
		{in: `tags:"a \"b\" \\ c"`, want: `tags = "a \"b\" \\ c"`},
		{in: `tags:'it\'s'`, want: `tags = "it's"`},
		{in: `tags = a AND tags = b OR tags = c`, want: `((tags = "a") AND (tags = "b")) OR (tags = "c")`},
		{in: `tags = a tags = b`, want: `(tags = "a") AND (tags = "b")`},
		{in: `tags = a AND (tags = b OR tags = c)`, want: `(tags = "a") AND ((tags = "b") OR (tags = "c"))`},
		{in: `NOT tags = a`, want: `NOT (tags = "a")`},
		{in: `-tags:a`, want: `NOT (tags = "a")`},
		{in: `not not tags:a`, want: `NOT (NOT (tags = "a"))`},
		{in: `tags != a`, want: `NOT (tags = "a")`},
		{in: `tags IN (a, "b c")`, want: `tags IN ["a", "b c"]`},
		{in: `tags in [a]`, want: `tags = "a"`},
		{in: `tags = "OR"`, want: `tags = "OR"`},
		{in: `tags = AND`, want: `tags = "AND"`},
		{in: `type = application/a2a-agent-card+json`, want: `type IN ["application/a2a-agent-card+json", "application/a2a-agent-card"]`},
		{in: `publisher = "HTTPS://Acme.com/x"`, want: `publisherNames = "acme.com"`},
		{in: `verified = true`, want: `publisherVerified = true`},
		{in: `updatedAt >= 2026-01-01`, want: `updatedAtTs >= 1767225600`},
		{in: `indexedAt < 2026-01-01T00:00:01Z`, want: `indexedAtTs < 1767225601`},
		{in: `identifier IN (urn:ai:a.com:agent:x, urn:air:b)`, want: `identifier IN ["urn:ai:a.com:agent:x", "urn:air:b"]`},
		{in: `identifier = urn:ai:a.com:x AND tags:b`, want: `(identifier = "urn:ai:a.com:x") AND (tags = "b")`},
		{in: `expiresAt = 0`, want: `expiresAtTs = 0`},
		{in: `compliance:HIPAA`, want: `compliance = "hipaa"`},
		{in: `tags = 東京`, want: `tags = "東京"`},
		{in: `tags = a-b`, want: `tags = "a-b"`},
		{in: `tags =`, code: CodeInvalidRequest},
		{in: `tags`, code: CodeInvalidRequest},
		{in: `= a`, code: CodeInvalidRequest},
		{in: `(tags = a`, code: CodeInvalidRequest},
		{in: `tags = a)`, code: CodeInvalidRequest},
		{in: `tags = "a`, code: CodeInvalidRequest},
		{in: `tags ! a`, code: CodeInvalidRequest},
		{in: `tags IN a`, code: CodeInvalidRequest},
		{in: `tags IN (a b)`, code: CodeInvalidRequest},
		{in: `AND tags = a`, code: CodeInvalidRequest},
		{in: `tags = a OR`, code: CodeInvalidRequest},
		{in: `tags > a`, code: CodeInvalidRequest},
		{in: `verified = yes`, code: CodeInvalidRequest},
		{in: `updatedAt > soon`, code: CodeInvalidRequest},
		{in: `secret = x`, code: CodeUnsupportedFilter},
		{in: `tags = a OR _geoRadius = x`, code: CodeUnsupportedFilter},
		{in: "tags = \xff", code: CodeInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			tree, err := parseFilter(tc.in)
			var got string
			if err == nil {
				got, err = translate(tree)
			}
			if tc.code != "" {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Code != tc.code {
					t.Fatalf("got %q, %v; want error %s", got, err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestFilterLimits(t *testing.T) {
	deep := ""
	for range 40 {
		deep += "("
	}
	deep += "tags = a"
	for range 40 {
		deep += ")"
	}
	many := "tags = a"
	for range 120 {
		many += " OR tags = a"
	}
	for _, in := range []string{deep, many, string(make([]byte, 3000))} {
		if _, err := parseFilter(in); err == nil {
			t.Errorf("parseFilter(%.20q...) accepted", in)
		}
	}
}

// FuzzParseFilter: any input either fails with an APIError or translates to
// a filter; the parser never panics.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`tags = a AND NOT (type:x OR verified = true)`, `tags IN ("a", 'b')`, `-x:"\""`, `updatedAt >= 2026-01-01`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tree, err := parseFilter(s)
		if err == nil {
			_, err = translate(tree)
		}
		var ae *APIError
		if err != nil && !errors.As(err, &ae) {
			t.Fatalf("%q: non-API error %v", s, err)
		}
	})
}

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
