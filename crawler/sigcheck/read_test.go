package sigcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// readTestHost signs the documents of the read tests.
const readTestHost = "pub.test"

// didFetcher serves the DID document of readTestHost.
type didFetcher struct{}

func (didFetcher) Fetch(_ context.Context, u string) ([]byte, error) {
	if u == "https://"+readTestHost+"/.well-known/did.json" {
		return fixtures.DIDDocument(readTestHost), nil
	}
	return nil, fmt.Errorf("get %s: HTTP 404", u)
}

// readTestDocs are signed documents in the shapes a crawl meets: indented,
// escaped names, entries whose inline data carries its digest (good and
// bad), entry trust manifests signed in both shapes, an inline nested
// catalog, a document that does not canonicalize.
func readTestDocs(t testing.TB) map[string][]byte {
	t.Helper()
	key, kid, did := fixtures.SigningKey(readTestHost), fixtures.KeyID(readTestHost), fixtures.DID(readTestHost)
	data := map[string]any{"name": "Inline", "skills": []any{map[string]any{"id": "é", "n": 1.5e3}}, "url": "https://pub.test/a2a"}
	entry := func(id string, extra map[string]any) map[string]any {
		e := map[string]any{"identifier": "urn:air:pub.test:agent:" + id, "displayName": id, "type": "application/a2a-agent-card+json", "version": "1.0.0"}
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	tm := func(id string, object bool) map[string]any {
		m := map[string]any{"identity": did, "subject": map[string]any{"identifier": "urn:air:pub.test:agent:" + id,
			"type": "application/a2a-agent-card+json", "version": "1.0.0", "digest": fixtures.Digest(fixtures.Canonical(data))}}
		if object {
			fixtures.SignObject(m, key, did, kid, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")
		} else {
			fixtures.SignManifest(m, key, kid, nil)
		}
		return m
	}
	inner := map[string]any{"specVersion": "1.0", "entries": []any{entry("nested", map[string]any{"data": data, "digest": fixtures.Digest(fixtures.Canonical(data))})}}
	cat := map[string]any{"specVersion": "1.0", "host": map[string]any{"identifier": did, "displayName": "Pub"}, "entries": []any{
		entry("good", map[string]any{"data": data, "digest": fixtures.Digest(fixtures.Canonical(data))}),
		entry("bad", map[string]any{"data": data, "digest": fixtures.Digest([]byte("other"))}),
		entry("weak", map[string]any{"url": "https://pub.test/a.json", "digest": "md5:5d41402abc4b2a76b9719d911017c592"}),
		entry("v042", map[string]any{"data": data, "digest": fixtures.Digest(fixtures.Canonical(data)), "trustManifest": tm("v042", false)}),
		entry("object", map[string]any{"data": data, "trustManifests": []any{tm("object", true)}}),
		map[string]any{"identifier": "urn:air:pub.test:catalog:bundle", "displayName": "Bundle", "type": "application/ai-catalog+json", "data": inner},
	}}
	fixtures.SignManifest(cat, key, kid, nil)
	indented, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(cat)
	out := map[string][]byte{
		"indented": indented,
		"compact":  compact,
		// Escaped names and a tampered entry: the same verdicts read
		// either way, whatever they are.
		"escaped":   []byte(`{"host":{"identifier":"` + did + `"},"entr\u0069es":[{"identifier":"urn:air:pub.test:agent:x","type":"application/a2a-agent-card+json","d\u0061ta":{"b":1,"a":"\u00e9"},"digest":"` + fixtures.Digest([]byte(`{"a":"é","b":1}`)) + `"}],"signature":"x..y"}`),
		"duplicate": []byte(`{"entries":[{"data":{"a":1,"a":2},"digest":"sha256:00"}],"signature":"x..y"}`),
		"too large": []byte(`{"entries":[{"data":[1e400],"digest":"sha256:00"}],"signature":"x..y"}`),
	}
	files, _ := filepath.Glob("testdata/realworld/*.json")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(name)] = b
	}
	return out
}

// checkReadCanonical holds reading a signed document in its JCS form to
// reading it as fetched, each part canonicalized alone: the same verdicts.
func checkReadCanonical(t *testing.T, body []byte) (tv *normalize.TrustVerdicts) {
	t.Helper()
	now := time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	asFetched, _ := New(Config{Clock: clock}).verdicts(t.Context(), didFetcher{}, body, now, false)
	canonical, _ := New(Config{Clock: clock}).verdicts(t.Context(), didFetcher{}, body, now, true)
	if !reflect.DeepEqual(asFetched, canonical) {
		a, _ := json.MarshalIndent(asFetched, "", " ")
		c, _ := json.MarshalIndent(canonical, "", " ")
		t.Fatalf("%q:\nread as fetched %s\nread canonical %s", body, a, c)
	}
	return canonical
}

// TestReadCanonicalMatchesAsFetched: reading a signed document in its JCS
// form changes no verdict, and the documents check as they should.
func TestReadCanonicalMatchesAsFetched(t *testing.T) {
	for name, body := range readTestDocs(t) {
		t.Run(name, func(t *testing.T) {
			tv := checkReadCanonical(t, body)
			if name != "indented" && name != "compact" {
				return
			}
			if tv == nil || tv.Catalog == nil || !tv.Catalog.Valid() {
				t.Fatalf("verdicts %+v, want a valid catalog signature", tv)
			}
			// Digests alone (no signer: the catalog's signature covers
			// them) hold or fail; the signed manifests hold.
			for path, want := range map[string]string{"entries[0]": "", "entries[1]": normalize.CodeDigestMismatch,
				"entries[2]": normalize.CodeWeakDigest, "entries[3]": "signed", "entries[4]": "signed", "entries[5].data.entries[0]": ""} {
				ev, ok := tv.Entries[path]
				got := ""
				switch {
				case ev.Valid():
					got = "signed"
				case len(ev.Problems) > 0:
					got = ev.Problems[0].Code
				}
				if !ok || got != want {
					t.Errorf("%s: verdict %+v (present %v), want %q", path, ev, ok, want)
				}
			}
		})
	}
}

// FuzzReadCanonical holds reading in JCS form to reading as fetched on any
// input.
func FuzzReadCanonical(f *testing.F) {
	for _, body := range readTestDocs(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkReadCanonical(t, body) })
}

// TestMayHoldDigest: the skip before decoding trust manifests never skips
// a member encoding/json reads as digest.
func TestMayHoldDigest(t *testing.T) {
	for _, raw := range []string{`{"digest":"x"}`, `{"DIGEST":"x"}`, `{"DiGeSt":"x"}`, `{"dig\u0065st":"x"}`, `{"digeſt":"x"}`} {
		var m struct{ Digest string }
		if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Digest == "" {
			t.Fatalf("%s: encoding/json read no digest (%v)", raw, err)
		}
		if !mayHoldDigest([]byte(raw)) {
			t.Errorf("%s: skipped, but encoding/json reads a digest", raw)
		}
	}
	if mayHoldDigest([]byte(`{"attestations":[{"type":"SOC2","uri":"https://pub.test/a.pdf"}]}`)) || mayHoldDigest(nil) {
		t.Error("a manifest without a digest is not skipped")
	}
}

// readByMembers reads a catalog as the checks did before readCatalog:
// members into maps and lists, then each entry's members; the oracle
// FuzzReadCatalog holds readCatalog to.
func readByMembers(b []byte) (cat catalogFields, ok bool) {
	top, ok := rawjson.Members(b)
	if !ok || top == nil {
		return cat, false
	}
	cat.host, cat.signature = top["host"], top["signature"]
	list, _ := rawjson.Items(top["entries"])
	for i, raw := range list {
		m := map[string]json.RawMessage{}
		if rawjson.EachMember(raw, func(k string, v []byte) error { m[k] = v; return nil }) != nil {
			continue
		}
		e := entryFields{index: i, rawData: m["data"], inline: m["inline"], version: m["version"],
			trustManifest: m["trustManifest"], trustManifests: m["trustManifests"],
			identifier: str(m["identifier"]), typ: str(m["type"]), url: str(m["url"]), digest: str(m["digest"])}
		if e.typ == "" {
			e.typ = str(m["mediaType"])
		}
		if !isNull(e.rawData) {
			e.data = e.rawData
		}
		if isNull(e.version) {
			e.version = nil
		}
		cat.entries = append(cat.entries, e)
	}
	return cat, true
}

// checkReadCatalog holds readCatalog to readByMembers on b when it is
// JSON (normalize takes nothing from a document that is not, so neither
// do the verdicts on it: then only nothing may panic).
func checkReadCatalog(t *testing.T, b []byte) {
	t.Helper()
	got, gok := readCatalog(b)
	if !json.Valid(b) {
		return
	}
	want, wok := readByMembers(b)
	if gok != wok || gok && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: readCatalog gave %+v, %v; want %+v, %v", b, got, gok, want, wok)
	}
}

// TestReadCatalog: one pass over a catalog reads what maps of its members
// read, on the read tests' documents and on broken ones.
func TestReadCatalog(t *testing.T) {
	for _, b := range readTestDocs(t) {
		checkReadCatalog(t, b)
	}
	for _, s := range []string{`null`, `[]`, `{}`, `{"entries":null}`, `{"entries":[1,{"type":"x"},[],"y"]}`,
		`{"entries":{"type":"a"},"signature":"s"}`, `{"entries":[{"type":"a"}],"entries":[{"type":"b"}]}`, `{"entries":[],"host":{}}`,
		`{"entries":[{"type":"a","type":"b","mediaType":"m","data":null,"version":null}]}`, `{"entries":[{"t\u0079pe":"a"}]}`,
		`{"entries":[{"":0"}]}`, `{"entries":[{"type" "y"}]}`} {
		checkReadCatalog(t, []byte(s))
	}
}

// FuzzReadCatalog holds readCatalog to readByMembers on any input.
func FuzzReadCatalog(f *testing.F) {
	for _, b := range readTestDocs(f) {
		f.Add(b)
	}
	f.Fuzz(checkReadCatalog)
}
