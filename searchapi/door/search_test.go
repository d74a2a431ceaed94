package door

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Prepare gives a query the caller's groups and nothing the query held
// before; an anonymous caller gets none.
func TestPrepareSetsCallersAccess(t *testing.T) {
	ctx := WithCaller(t.Context(), Caller{Name: "k", Groups: []string{"staff"}})
	q := Prepare(ctx, &search.Query{Text: "x", Access: []string{"forged"}})
	if !slices.Equal(q.Access, []string{"staff"}) {
		t.Fatalf("Access = %v, want [staff]", q.Access)
	}
	if q := Prepare(t.Context(), &search.Query{Access: []string{"forged"}}); q.Access != nil {
		t.Fatalf("anonymous Access = %v, want none", q.Access)
	}
}

// ViaOf reads every element of every Via header, as the engine's loop
// check needs.
func TestViaOfReadsEveryElement(t *testing.T) {
	r := httptest.NewRequest("POST", "/search", nil)
	r.Header.Add("Via", "1.1 a.example, 1.1 b.example")
	r.Header.Add("Via", "1.1 c.example")
	if got := ViaOf(r); len(got) != 3 {
		t.Fatalf("ViaOf = %v, want 3 names", got)
	}
}
