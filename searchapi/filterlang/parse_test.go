package filterlang

import (
	"errors"
	"testing"
)

func TestParseAndTranslateFilter(t *testing.T) {
	tests := []struct {
		in   string
		want string
		code string // expected error kind instead: invalid or unsupported
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
		{in: `tags =`, code: "invalid"},
		{in: `tags`, code: "invalid"},
		{in: `= a`, code: "invalid"},
		{in: `(tags = a`, code: "invalid"},
		{in: `tags = a)`, code: "invalid"},
		{in: `tags = "a`, code: "invalid"},
		{in: `tags ! a`, code: "invalid"},
		{in: `tags IN a`, code: "invalid"},
		{in: `tags IN (a b)`, code: "invalid"},
		{in: `AND tags = a`, code: "invalid"},
		{in: `tags = a OR`, code: "invalid"},
		{in: `tags > a`, code: "invalid"},
		{in: `verified = yes`, code: "invalid"},
		{in: `updatedAt > soon`, code: "invalid"},
		{in: `secret = x`, code: "unsupported"},
		{in: `tags = a OR _geoRadius = x`, code: "unsupported"},
		{in: "tags = \xff", code: "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.code != "" {
				var fe *Error
				if !errors.As(err, &fe) || fe.Unsupported != (tc.code == "unsupported") {
					t.Fatalf("got %q, %v; want error %s", got, err, tc.code)
				}
				return
			}
			if err != nil || string(got) != tc.want {
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

// FuzzParseFilter: any input either fails with an *Error or translates to
// a filter; the parser never panics.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`tags = a AND NOT (type:x OR verified = true)`, `tags IN ("a", 'b')`, `-x:"\""`, `updatedAt >= 2026-01-01`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := Parse(s)
		var fe *Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("%q: error %v is not an *Error", s, err)
		}
	})
}
