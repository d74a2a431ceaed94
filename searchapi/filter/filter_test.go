package filter

import (
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

func TestExpressions(t *testing.T) {
	now := time.Unix(1767225600, 0)
	tests := []struct {
		name string
		got  Expr
		want string
	}{
		{"quoted value", Eq("tags", `a "b" \ c`), `tags = "a \"b\" \\ c"`},
		{"one value is equality", Any("tags", []string{"a"}), `tags = "a"`},
		{"several values", Any("tags", []string{"a", "b"}), `tags IN ["a", "b"]`},
		{"in keeps the list", In("identifier", []string{"x"}), `identifier IN ["x"]`},
		{"numbers and booleans", InValues("n", []Value{Int(1), Bool(true)}), `n IN [1, true]`},
		{"and drops empty parts", And("", Eq("a", "1"), ""), `a = "1"`},
		{"and wraps each part", And(Eq("a", "1"), Or(Eq("b", "2"), Eq("c", "3"))), `(a = "1") AND ((b = "2") OR (c = "3"))`},
		{"not of nothing", Not(""), ``},
		{"not", Not(Eq("a", "1")), `NOT (a = "1")`},
		{"since", Since(normalize.FieldIndexedAtTs, now), normalize.FieldIndexedAtTs + ` >= 1767225600`},
		{"live", Live(now), `(stale = false) AND ((expiresAtTs = 0) OR (expiresAtTs > 1767225600))`},
		{"public only", Access(nil), `(visibility NOT EXISTS) OR (visibility IS EMPTY)`},
		{"groups", Access([]string{"ops"}), `(visibility NOT EXISTS) OR (visibility IS EMPTY) OR (visibility = "ops")`},
		{"type spellings", Match(normalize.FieldType, "APPLICATION/MCP-SERVER"), `type IN ["application/mcp-server+json", "application/mcp-server"]`},
		{"health absent counts as unknown", Match(normalize.FieldHealthStatus, "unknown"), `(health.status = "unknown") OR (health.status NOT EXISTS)`},
		{"health up is only up", Match(normalize.FieldHealthStatus, "up"), `health.status = "up"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if string(tc.got) != tc.want {
				t.Fatalf("got %s, want %s", tc.got, tc.want)
			}
		})
	}
}

func TestEmptyIsNoFilter(t *testing.T) {
	if f := Expr("").Filter(); f != nil {
		t.Fatalf("empty expression gives filter %v, want nil", f)
	}
	if f := Eq("a", "b").Filter(); f != `a = "b"` {
		t.Fatalf("got filter %v", f)
	}
}

func TestCheckValues(t *testing.T) {
	f := normalize.FilterFields["trust.level"]
	if err := CheckValues("trust", f, []string{normalize.TrustSigned}); err != nil {
		t.Fatalf("signed refused: %v", err)
	}
	if err := CheckValues("trust", f, []string{"bogus"}); err == nil {
		t.Fatal("a level outside the closed list was accepted")
	}
}
