// Package sigcheck checks the signatures and inline digests of an
// ai-catalog document for the crawler: detached JWS (RFC 7515 appendix F)
// over the JCS (RFC 8785) form of the signed JSON, profile did-web-v1 (ES256
// only, the key taken from the signer's did:web DID document under
// assertionMethod, never from the JWS header), on a whole catalog and on
// each entry's trust manifest, in both the Agent Finder v0.4.2 shape
// (trustManifest.signature, a JWS string) and the ai-catalog shape
// (trustManifests[].signature, an object {signer, profile, issuedAt,
// expiresAt, jws}). The verdicts go to normalize as data.
//
// DID documents are fetched through the Fetcher the caller gives (the
// crawler's own, so robots.txt, limits and the network guard apply) and
// kept in a cache bounded in size and time. It imports normalize only.
package sigcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// Fetcher fetches one document (a DID document) and returns its body; a
// status other than 2xx is an error.
type Fetcher interface {
	Fetch(ctx context.Context, url string) ([]byte, error)
}

// ErrNotFetched is what a Fetcher that must not reach the network (checking
// a local file) returns: the signatures that need a key are then reported
// as not checked, and the failure is not cached.
var ErrNotFetched = errors.New("not fetched")

// Offline is a Fetcher that fetches nothing: every DID document is
// ErrNotFetched.
type Offline struct{}

// Fetch returns ErrNotFetched.
func (Offline) Fetch(_ context.Context, u string) ([]byte, error) {
	return nil, fmt.Errorf("%s: %w", u, ErrNotFetched)
}

// Config tunes a Verifier; the zero value is usable.
type Config struct {
	// CacheTTL is how long a resolved DID document is trusted. Default 1h.
	CacheTTL time.Duration
	// FailureTTL is how long a DID that could not be resolved is not
	// tried again. Default 1m.
	FailureTTL time.Duration
	// CacheSize bounds the DIDs cached. Default 4096.
	CacheSize int
	// Clock is the cache's clock; time.Now when nil. (Expiry of
	// signatures uses the time given to Catalog.)
	Clock func() time.Time
}

// Verifier checks catalogs. It is safe for concurrent use and keeps its DID
// cache, and the verdicts on the catalogs it checked, across calls.
type Verifier struct {
	cfg    Config
	cache  *lru.Cache[string, cached]
	flight singleflight.Group
	// done holds verdicts by the SHA-256 of the catalog bytes, until they
	// may change (TrustVerdicts.Until): a catalog served again unchanged
	// (a server without validators, a re-crawl) is not checked again.
	done *lru.Cache[[sha256.Size]byte, *normalize.TrustVerdicts]
}

// cached is one DID resolution: its keys, or why it failed, until a time.
type cached struct {
	keys  didKeys
	err   error
	until time.Time
}

// New builds a Verifier.
func New(cfg Config) *Verifier {
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = time.Hour
	}
	if cfg.FailureTTL <= 0 {
		cfg.FailureTTL = time.Minute
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = 4096
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	c, _ := lru.New[string, cached](cfg.CacheSize) // only a non-positive size fails
	done, _ := lru.New[[sha256.Size]byte, *normalize.TrustVerdicts](cfg.CacheSize)
	return &Verifier{cfg: cfg, cache: c, done: done}
}

// Catalog checks the whole-catalog signature of body and each entry's
// (inline nested catalogs' too) signed trust manifests and inline digests,
// as of now. The verdicts do not depend on where body was fetched from, so
// the same bytes checked before are answered from the verdicts kept, until
// those may change. It returns nil when body holds nothing to check (no
// signature, no digest) or is not a JSON object: normalize reports what is
// wrong with such a document. The result is shared: callers must not
// change it.
func (v *Verifier) Catalog(ctx context.Context, f Fetcher, body []byte, now time.Time) *normalize.TrustVerdicts {
	// Names searched from their first rare letter: bytes.Index jumps
	// between the candidates for the first byte, and a quote is in every
	// string. (A name written with escapes is not seen: the catalog then
	// counts as unsigned.)
	body = normalize.TrimBOM(body) // as normalize reads it
	signed := bytes.Contains(body, []byte(`gnature"`))
	if !signed && !bytes.Contains(body, []byte(`gest"`)) {
		return nil // the common case: nothing signed, nothing to check
	}
	key := sha256.Sum256(body)
	if tv, ok := v.done.Get(key); ok && !now.Before(tv.CheckedAt) && (tv.Until.IsZero() || now.Before(tv.Until)) {
		again := *tv // shared read-only but for when it was checked
		again.CheckedAt = now
		return &again
	}
	tv, settled := v.verdicts(ctx, f, body, now, signed)
	if tv != nil && settled {
		v.done.Add(key, tv)
	}
	return tv
}

// verdicts checks body as of now; settled is false when a key was not
// fetched (cancelled, offline), so the verdicts must not be kept.
//
// A document that is signed (readCanonical) is read in its JCS form when it
// has one: what each signature covers and what each inline data digest is
// over is then a part of it (RFC 8785 writes a value the same wherever it
// stands), so the document is canonicalized once, not again piece by
// piece. One that does not canonicalize (duplicate names, a number JCS
// cannot write) is read as fetched, each part canonicalized alone; so is
// one with digests only.
func (v *Verifier) verdicts(ctx context.Context, f Fetcher, body []byte, now time.Time, readCanonical bool) (tv *normalize.TrustVerdicts, settled bool) {
	c := &check{v: v, f: f, now: now}
	doc := body
	if readCanonical {
		if canon, err := canonicalize(body); err == nil {
			doc, c.canonical = canon, true
		}
	}
	// rawjson splits without validating (bounded on any input); what is
	// signed is validated by its canonicalization, the rest by normalize.
	cat, ok := readCatalog(doc)
	if !ok {
		return nil, true
	}
	out := &normalize.TrustVerdicts{CheckedAt: now}
	// The entries first: the catalog's signed payload is cut out of the
	// canonical document in place.
	c.entries(ctx, cat.entries, "", 0, out)
	if cat.signature != nil && !isNull(cat.signature) {
		cv := c.catalog(ctx, doc, cat)
		out.Catalog = &cv
	}
	if out.Catalog == nil && out.Entries == nil {
		return nil, true
	}
	out.Until = c.until
	return out, !c.unsettled
}

// check is one Catalog call.
type check struct {
	v   *Verifier
	f   Fetcher
	now time.Time

	until     time.Time // the earliest time a verdict may change (zero: never)
	unsettled bool      // a key was not fetched (cancelled, offline): keep no verdict
	canonical bool      // the document read is in its JCS form (a copy of the body)
}

// payload returns the bytes a signature over raw (the document read, or a
// trust manifest in it) signs. In a canonical document raw is canonical
// already, and the members the signature does not cover are cut out of it,
// in place when own (raw is the whole document, read last), else out of a
// copy.
func (c *check) payload(raw []byte, object, own bool) ([]byte, error) {
	if !c.canonical {
		return signedPayload(raw, object)
	}
	if !own {
		raw = bytes.Clone(raw)
	}
	return payloadOf(raw, object)
}

// changesAt notes that a verdict may change at t.
func (c *check) changesAt(t time.Time) {
	if t.After(c.now) && (c.until.IsZero() || t.Before(c.until)) {
		c.until = t
	}
}

// entries checks the entries of one catalog object: the document's
// (prefix "") or an inline nested catalog's (prefix "entries[2].data."),
// and the inline catalogs nested in them, as deep as normalize follows
// them. Verdicts are keyed by the JSON paths normalize gives the entries.
func (c *check) entries(ctx context.Context, list []entryFields, prefix string, depth int, out *normalize.TrustVerdicts) {
	for i := range list {
		f := &list[i]
		path := fmt.Sprintf("%sentries[%d]", prefix, f.index)
		f.canonical = c.canonical
		if ev, ok := c.entry(ctx, f, path); ok {
			if out.Entries == nil {
				out.Entries = map[string]normalize.SignatureVerdict{}
			}
			out.Entries[path] = ev
		}
		if depth+1 >= normalize.DefaultMaxDepth {
			continue
		}
		if normalize.CanonicalType(f.typ) != normalize.TypeAICatalog {
			continue
		}
		for _, in := range []struct {
			key string
			raw json.RawMessage
		}{{"data", f.rawData}, {"inline", f.inline}} {
			if inner, ok := readCatalog(in.raw); ok {
				c.entries(ctx, inner.entries, path+"."+in.key+".", depth+1, out)
				break
			}
		}
	}
}

// catalog checks the whole-catalog signature of doc: its signer must be
// the catalog's host.identifier.
func (c *check) catalog(ctx context.Context, doc []byte, cat catalogFields) normalize.SignatureVerdict {
	var host struct {
		Identifier string `json:"identifier"`
	}
	_ = json.Unmarshal(cat.host, &host)
	in, p := readSignature(cat.signature, "signature")
	if p != nil {
		return normalize.SignatureVerdict{Problems: []normalize.Problem{*p}}
	}
	in.payload = func() ([]byte, error) { return c.payload(doc, in.object, true) }
	return c.verify(ctx, in, host.Identifier, "the catalog's host.identifier")
}

// entry checks one entry (its members e): its inline data against its
// digest, and its signed trust manifests. ok is false when the entry has
// nothing to check.
func (c *check) entry(ctx context.Context, e *entryFields, path string) (normalize.SignatureVerdict, bool) {
	var problems []normalize.Problem
	touched := false
	if e.digest != "" {
		touched = true
		if len(e.data) > 0 {
			if p := e.dataDigest(e.digest, path+".digest"); p != nil {
				problems = append(problems, *p)
			}
		} else if _, _, p := parseDigest(e.digest, path+".digest"); p != nil {
			problems = append(problems, *p)
		}
	}
	if ps := e.attestationDigests(path); len(ps) > 0 {
		touched = true
		problems = append(problems, ps...)
	}
	manifests := e.manifests(path)
	if len(manifests) == 0 {
		return normalize.SignatureVerdict{Problems: problems}, touched
	}
	want := ""
	if id, _, ok := normalize.ParseIdentifier(e.identifier); ok && id.Publisher != "" {
		want = "did:web:" + id.Publisher
	}
	var failed normalize.SignatureVerdict
	for _, m := range manifests {
		mv := c.manifest(ctx, e, m, want)
		if mv.Valid() {
			mv.Problems = append(problems, mv.Problems...)
			return mv, true
		}
		if failed.Signer == "" {
			failed.Signer = mv.Signer
		}
		failed.Problems = append(failed.Problems, mv.Problems...)
	}
	failed.Problems = append(problems, failed.Problems...)
	return failed, true
}

// manifest checks one signed trust manifest of entry e: its signature by
// want (did:web of the entry's publisher) and its subject.
func (c *check) manifest(ctx context.Context, e *entryFields, m signedManifest, want string) normalize.SignatureVerdict {
	in, p := readSignature(m.fields["signature"], m.path+".signature")
	if p != nil {
		return normalize.SignatureVerdict{Problems: []normalize.Problem{*p}}
	}
	if !in.object {
		in.expiresAt, in.issuedAt = str(m.fields["expiresAt"]), str(m.fields["issuedAt"])
	}
	in.payload = func() ([]byte, error) { return c.payload(m.raw, in.object, false) }
	subject := e.subjectProblems(m)
	v := c.verify(ctx, in, want, "did:web of the entry's publisher")
	v.Problems = append(subject, v.Problems...)
	return v
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// str reads a JSON string, "" when raw is not one.
func str(raw json.RawMessage) string {
	var s string
	if !rawjson.String(raw, &s) {
		return ""
	}
	return s
}
