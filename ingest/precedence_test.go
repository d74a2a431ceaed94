package ingest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestOutranksIsATotalOrder checks the precedence order on every
// combination of the fields it reads: for two different claims exactly one
// outranks the other, and outranking is transitive, so the winner among any
// set of claims does not depend on the order they arrive in.
func TestOutranksIsATotalOrder(t *testing.T) {
	var claims []claim
	for _, stale := range []bool{false, true} {
		for _, unconfirmed := range []bool{false, true} {
			for _, signed := range []bool{false, true} {
				for _, verified := range []bool{false, true} {
					for _, seq := range []int64{0, 2, 7} {
						for _, ts := range []int64{0, 2000} {
							for _, cat := range []string{"https://a.test/c.json", "https://b.test/c.json"} {
								for _, hash := range []string{"aa", "bb"} {
									// The kind of source varies where the rules above it tie often.
									kinds := []string{normalize.SourceCatalog}
									if !stale && !unconfirmed && !signed {
										kinds = append(kinds, normalize.SourceCard, normalize.SourceRegistry)
									}
									for _, kind := range kinds {
										claims = append(claims, claim{catalog: cat, hash: hash, signed: signed, verified: verified, seq: seq, updatedTs: ts, stale: stale, unconfirmed: unconfirmed, kind: kind})
									}
								}
							}
						}
					}
				}
			}
		}
	}
	beats := make([][]bool, len(claims))
	for i, a := range claims {
		beats[i] = make([]bool, len(claims))
		for j, b := range claims {
			ab, reason := outranks(a, b)
			ba, _ := outranks(b, a)
			beats[i][j] = ab
			if i == j {
				if ab || reason != "" {
					t.Fatalf("%+v outranks itself (%q)", a, reason)
				}
				continue
			}
			if ab == ba {
				t.Fatalf("%+v vs %+v: outranks both ways or neither (%v)", a, b, ab)
			}
		}
	}
	for i := range claims {
		for j := range claims {
			if !beats[i][j] {
				continue
			}
			for k := range claims {
				if beats[j][k] && !beats[i][k] {
					t.Fatalf("not transitive: %+v > %+v > %+v but not %+v > %+v", claims[i], claims[j], claims[k], claims[i], claims[k])
				}
			}
		}
	}
	// The rules apply in the documented order.
	base := claim{catalog: "https://b.test/c.json", hash: "bb", seq: 2, updatedTs: 1000, kind: normalize.SourceCard}
	cases := []struct {
		name   string
		change func(c *claim)
		reason string
	}{
		{"live beats stale", func(c *claim) { c.stale = true; c.signed = true; c.verified = true; c.seq = 9 }, reasonStale},
		{"signed beats unsigned, though older, lower seq, later URL", func(c *claim) { c.signed = true; c.seq = 0; c.updatedTs = 0; c.catalog = "https://z.test/" }, reasonSigned},
		{"verified beats unverified", func(c *claim) { c.verified = true; c.seq = 0; c.updatedTs = 0 }, reasonVerified},
		{"publisher's catalog beats a bare card, though lower seq", func(c *claim) { c.kind = normalize.SourceCatalog; c.seq = 0; c.updatedTs = 0 }, reasonSource},
		{"higher seq", func(c *claim) { c.seq = 3; c.updatedTs = 0 }, reasonSeq},
		{"newer updatedAt", func(c *claim) { c.updatedTs = 2000; c.catalog = "https://z.test/" }, reasonUpdated},
		{"catalog URL", func(c *claim) { c.catalog = "https://a.test/c.json"; c.hash = "zz" }, reasonCatalog},
		{"content hash", func(c *claim) { c.hash = "aa" }, reasonHash},
	}
	for _, tc := range cases {
		c := base
		tc.change(&c)
		win, reason := outranks(c, base)
		if reason != tc.reason {
			t.Errorf("%s: decided by %q, want %q", tc.name, reason, tc.reason)
		}
		if wantWin := tc.reason != reasonStale; win != wantWin {
			t.Errorf("%s: changed claim wins = %v, want %v", tc.name, win, wantWin)
		}
	}
}

// TestConflictResolvesTheSameInAnyOrder has three catalogs claim one
// identifier in three spellings and syncs them in different orders, one
// batch each and all in one batch: the stored record, its spelling and its lost
// claims are the same every time, and the losers are on the record.
func TestConflictResolvesTheSameInAnyOrder(t *testing.T) {
	const (
		b1 = "https://b1.test/.well-known/ai-catalog.json"
		b2 = "https://b2.test/.well-known/ai-catalog.json"
		b3 = "https://b3.test/.well-known/ai-catalog.json"
	)
	results := []normalize.CatalogResult{
		catalog(t, b3, manifest(entry("urn:ai:acme.test:agent:x", "X", "from b3", "2025-01-01T00:00:00Z"))),
		catalog(t, b2, manifest(entry("urn:air:ACME.test:agent:x", "X", "from b2", "2025-01-01T00:00:00Z"))),
		catalog(t, b1, manifest(entry("urn:air:acme.test:agent:x", "X", "from b1, older", "2024-01-01T00:00:00Z"))),
	}
	type outcome struct {
		Identifier, Catalog, Description string
		Lost                             []normalize.Claim
	}
	want := outcome{Identifier: "urn:air:ACME.test:agent:x", Catalog: b2, Description: "from b2"}
	e := newEnv(t, Config{})
	// Each of the three first, each of the other two second, and one run
	// all in one batch (-1).
	orders := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0, -1}}
	var first *outcome
	for _, order := range orders {
		name := fmt.Sprint(order)
		// Start from an empty index: every catalog drops the entry.
		e.sync(catalog(t, b1, manifest()), catalog(t, b2, manifest()), catalog(t, b3, manifest()))
		if n := e.count(""); n != 0 {
			t.Fatalf("%s: %d documents left before the run", name, n)
		}
		if order[len(order)-1] == -1 {
			var rs []normalize.CatalogResult
			for _, i := range order[:3] {
				rs = append(rs, results[i])
			}
			e.sync(rs...)
		} else {
			for _, i := range order {
				e.sync(results[i])
			}
		}
		d := e.doc("urn:ai:acme.test:agent:x")
		if d == nil {
			t.Fatalf("%s: no record", name)
		}
		got := outcome{Identifier: d.Identifier, Catalog: d.SourceCatalog, Description: d.Description, Lost: d.LostClaims}
		if got.Identifier != want.Identifier || got.Catalog != want.Catalog || got.Description != want.Description {
			t.Fatalf("%s: stored %+v, want the record of %s", name, got, want.Catalog)
		}
		if first == nil {
			first = &got
			if len(got.Lost) != 2 || got.Lost[0].Catalog != b1 || got.Lost[0].Reason != reasonUpdated ||
				got.Lost[1].Catalog != b3 || got.Lost[1].Reason != reasonCatalog || got.Lost[1].Identifier != "urn:ai:acme.test:agent:x" {
				t.Fatalf("%s: lostClaims %+v, want b1 (updatedAt) and b3 (catalog URL)", name, got.Lost)
			}
		} else if !reflect.DeepEqual(got, *first) {
			t.Fatalf("%s: stored %+v, but %+v in the first order", name, got, *first)
		}
	}
}

// TestLostClaimsFollowTheirCatalogs: a lost claim leaves the record when its
// catalog drops the entry, moves onto the record when its holder is taken
// over, and survives a restart without rewrites.
func TestLostClaimsFollowTheirCatalogs(t *testing.T) {
	const id = "urn:air:acme.test:agent:weather"
	e := newEnv(t, Config{})
	e.sync(catalog(t, evil, manifest(entry(id, "Weather Agent", "evil", "2026-01-01T00:00:00Z"))))
	e.sync(catalog(t, acme, manifest(entry("urn:ai:acme.test:agent:weather", "Weather Agent", "acme", "2025-01-01T00:00:00Z"))))
	d := e.doc(id)
	if d == nil || d.SourceCatalog != acme || d.Identifier != "urn:ai:acme.test:agent:weather" {
		t.Fatalf("after acme's takeover: %+v", d)
	}
	if len(d.LostClaims) != 1 || d.LostClaims[0].Catalog != evil || d.LostClaims[0].Identifier != id ||
		d.LostClaims[0].Reason != reasonVerified {
		t.Fatalf("lostClaims after takeover = %+v, want evil's claim (verified publisher)", d.LostClaims)
	}

	// A restarted indexer knows the lost claim: evil's unchanged claim writes nothing.
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e.open(Config{})
	before := e.tasks()
	e.sync(catalog(t, evil, manifest(entry(id, "Weather Agent", "evil", "2026-01-01T00:00:00Z"))))
	if ar := e.results.last(evil); len(ar.Conflicts) != 1 {
		t.Fatalf("evil's re-sync: %+v, want one conflict", ar)
	}
	if after := e.tasks(); after != before {
		t.Fatalf("unchanged losing claim enqueued %d tasks, want 0", after-before)
	}

	// evil drops the entry: its claim leaves the record.
	e.sync(catalog(t, evil, manifest()))
	if d := e.doc(id); d == nil || d.SourceCatalog != acme || len(d.LostClaims) != 0 {
		t.Fatalf("after evil dropped its claim: %+v", d)
	}
}

// TestVanishedRecordAsksLosersForRefetch: when the catalog holding a record
// drops it, the record is deleted and the catalogs whose claims lost are no
// longer held, so the crawler fetches them in full; a full fetch of one
// brings its record back.
func TestVanishedRecordAsksLosersForRefetch(t *testing.T) {
	const id = "urn:air:acme.test:agent:weather"
	e := newEnv(t, Config{})
	e.sync(catalog(t, acme, manifest(entry(id, "Weather Agent", "acme", "2025-01-01T00:00:00Z"))),
		catalog(t, evil, manifest(entry("urn:ai:acme.test:agent:weather", "Weather Agent", "evil", "2026-01-01T00:00:00Z"))),
		catalog(t, acmeAlt, manifest(entry(id, "Weather Agent", "alt", "2024-01-01T00:00:00Z"))))
	if d := e.doc(id); d == nil || d.SourceCatalog != acme || len(d.LostClaims) != 2 {
		t.Fatalf("before: %+v", d)
	}
	e.sync(catalog(t, acme, manifest()))
	if d := e.doc(id); d != nil {
		t.Fatalf("the holder dropped the entry, still stored: %+v", d)
	}
	ar := e.results.last(acme)
	if want := []string{acmeAlt, evil}; !reflect.DeepEqual(ar.Refetch, want) {
		t.Fatalf("Refetch = %v, want %v", ar.Refetch, want)
	}
	if e.ix.Holds(acmeAlt) || e.ix.Holds(evil) || !e.ix.Holds(acme) {
		t.Fatalf("held after the deletion: acme %v, acmeAlt %v, evil %v; want only acme (the others must be fetched in full)",
			e.ix.Holds(acme), e.ix.Holds(acmeAlt), e.ix.Holds(evil))
	}
	e.sync(catalog(t, acmeAlt, manifest(entry(id, "Weather Agent", "alt", "2024-01-01T00:00:00Z"))))
	if d := e.doc(id); d == nil || d.SourceCatalog != acmeAlt {
		t.Fatalf("after the loser's full fetch: %+v", d)
	}
}

// TestSignedClaimWins: a copy of an entry signed by its publisher, hosted
// by a registry, keeps the record against an unsigned copy elsewhere that is
// newer, whichever arrives first, and across a restart the unsigned copy
// still loses without a write.
func TestSignedClaimWins(t *testing.T) {
	const (
		id       = "urn:air:acme.test:agent:mirror"
		registry = "https://registry.test/.well-known/ai-catalog.json"
		spoofer  = "https://spoofer.test/.well-known/ai-catalog.json"
	)
	signedCopy := catalog(t, registry, manifest(entry(id, "Mirror", "signed by acme", "2025-01-01T00:00:00Z")))
	signedCopy.Records[0].Trust = &normalize.Trust{Level: normalize.TrustSigned, Signer: "did:web:acme.test"}
	newer := func() normalize.CatalogResult {
		return catalog(t, spoofer, manifest(entry(id, "Mirror", "unsigned, newer", "2026-06-01T00:00:00Z")))
	}
	for _, order := range [][]normalize.CatalogResult{{signedCopy, newer()}, {newer(), signedCopy}} {
		e := newEnv(t, Config{})
		for _, r := range order {
			e.sync(r)
		}
		d := e.doc(id)
		if d == nil || d.SourceCatalog != registry || d.Description != "signed by acme" {
			t.Fatalf("stored %+v, want the signed copy from %s", d, registry)
		}
		if len(d.LostClaims) != 1 || d.LostClaims[0].Catalog != spoofer || d.LostClaims[0].Reason != reasonSigned || d.LostClaims[0].Signed {
			t.Fatalf("lostClaims %+v, want the spoofer's unsigned claim, lost by %q", d.LostClaims, reasonSigned)
		}
		if err := e.ix.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.open(Config{})
		before := e.tasks()
		e.sync(newer())
		if ar := e.results.last(spoofer); len(ar.Conflicts) != 1 || ar.Conflicts[0].Reason != reasonSigned {
			t.Fatalf("after a restart the unsigned copy's conflicts are %+v, want one lost by %q", ar.Conflicts, reasonSigned)
		}
		if after := e.tasks(); after != before {
			t.Errorf("after a restart the losing copy wrote %d tasks, want none", after-before)
		}
	}
}
