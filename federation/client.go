package federation

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/normalize"
)

// errTooLarge reports an upstream body over MaxResponseBytes.
var errTooLarge = errors.New("response larger than 1 MiB")

// errMalformed reports an upstream answer that is not a search response.
var errMalformed = errors.New("malformed search response")

// statusError is a non-2xx upstream answer.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("http status %d", e.code) }

// newHTTPClient builds the upstream client. The network guard sits in the
// dialer, so it checks every address actually connected to, on every
// redirect hop and whatever DNS answered (rebinding included), for configured
// and learned upstreams alike. Proxies are off: a proxy would hide the
// address from the guard.
func newHTTPClient(cfg Config, guard *netguard.Guard) *http.Client {
	d := &net.Dialer{Timeout: cfg.UpstreamTimeout, KeepAlive: 30 * time.Second, Control: guard.Control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.UpstreamTimeout,
		ResponseHeaderTimeout: cfg.UpstreamTimeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   cfg.UpstreamTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return errors.New("redirect to a non-http url")
			}
			return nil
		},
	}
}

// shape is the request body shape an upstream accepts.
type shape int

const (
	shapeV042 shape = iota // Agent Finder v0.4.2: federation and filters inside query
	shapeARD               // federation at the root, filters in query.filter
)

func (s shape) String() string {
	if s == shapeARD {
		return "ard"
	}
	return "v0.4.2"
}

// requestBody encodes q in the given shape.
func requestBody(q Query, federation, pageToken string, s shape) []byte {
	query := map[string]any{"text": q.Text}
	root := map[string]any{"query": query, "pageSize": q.PageSize}
	if len(q.Trust) > 0 || len(q.Health) > 0 {
		f := make(map[string][]string, len(q.Filter)+2)
		for k, v := range q.Filter {
			f[k] = v
		}
		for k, v := range map[string][]string{"trust.level": q.Trust, "health": q.Health} {
			if v = slices.DeleteFunc(slices.Clone(v), func(s string) bool { return s == "" }); len(v) > 0 {
				f[k] = v
			}
		}
		q.Filter = f
	}
	if pageToken != "" {
		root["pageToken"] = pageToken
	}
	if q.Verified {
		query["verifiedOnly"] = true // Agent Finder's extension, in the query in both shapes
	}
	switch s {
	case shapeV042:
		for k, v := range map[string][]string{"type": q.Type, "compliance": q.Compliance, "publisher": q.Publisher} {
			switch len(v) {
			case 0:
			case 1:
				query[k] = v[0]
			default:
				query[k] = v
			}
		}
		if len(q.Filter) > 0 {
			query["filter"] = q.Filter
		}
		query["federation"] = federation
	case shapeARD:
		filter := map[string][]string{}
		for k, v := range q.Filter {
			filter[k] = v
		}
		for k, v := range map[string][]string{"type": q.Type, "compliance": q.Compliance, "publisher": q.Publisher} {
			if len(v) > 0 {
				filter[k] = v
			}
		}
		if len(filter) > 0 {
			query["filter"] = filter
		}
		root["federation"] = federation
	}
	b, _ := json.Marshal(root)
	return b
}

// answer is one upstream response, validated.
type answer struct {
	hits       []Hit
	registries []Registry // registry entries from results and referrals
	next       string
	dropped    int // invalid results left out
}

// post sends one search request and returns the body of a 200 answer;
// auth, when not empty, is sent as the Authorization header.
func post(ctx context.Context, c *http.Client, endpoint string, body []byte, via, auth string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentfinder-federation/1")
	if via != "" {
		req.Header.Set("Via", via)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{code: resp.StatusCode}
	}
	if len(b) > MaxResponseBytes {
		return nil, errTooLarge
	}
	return b, nil
}

// maxUpstreamToken bounds an upstream page token kept in our own tokens.
const maxUpstreamToken = 1024

// reservedFields are set by this registry on upstream results; what an
// upstream sends under these names is not relayed. publisherVerified,
// trust and health are relayed only from trusted upstreams.
var reservedFields = []string{"score", "source", "originService", "receivedAt", "publisherVerified", "trust", "health"}

// parseAnswer parses an upstream body strictly (one JSON object, "results"
// an array, "referrals" an array, "pageToken" a string) and validates every
// result through normalize; invalid results are dropped, registry entries
// become registries.
func parseAnswer(body []byte, endpoint string, trusted bool, now time.Time) (answer, error) {
	var raw SearchAnswer
	dec := json.NewDecoder(bytes.NewReader(body))
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return answer{}, fmt.Errorf("%w: not a JSON object", errMalformed)
	}
	if err := dec.Decode(&raw); err != nil {
		return answer{}, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return answer{}, fmt.Errorf("%w: data after the JSON object", errMalformed)
	}
	if raw.Results == nil {
		return answer{}, fmt.Errorf("%w: no results array", errMalformed)
	}
	var a answer
	if len(raw.PageToken) <= maxUpstreamToken {
		a.next = raw.PageToken // a longer one ends that upstream's pages
	}
	for _, r := range raw.Results {
		var m map[string]json.RawMessage
		if json.Unmarshal(r, &m) != nil || m == nil {
			a.dropped++
			continue
		}
		if reg, ok := registryOf(m); ok {
			a.registries = append(a.registries, reg)
			continue
		} else if isRegistryType(stringField(m, "type")) {
			a.dropped++
			continue
		}
		h, ok := validHit(m, endpoint, trusted, now)
		if !ok {
			a.dropped++
			continue
		}
		a.hits = append(a.hits, h)
	}
	for _, r := range raw.Referrals {
		var m map[string]json.RawMessage
		if json.Unmarshal(r, &m) != nil || m == nil {
			continue
		}
		if t := stringField(m, "type"); t == "" {
			m["type"] = json.RawMessage(`"` + ReferralType + `"`)
		}
		if reg, ok := registryOf(m); ok {
			a.registries = append(a.registries, reg)
		}
	}
	return a, nil
}

// registryOf turns a registry entry (a result or a referral) into a Registry
// learned from an upstream.
func registryOf(m map[string]json.RawMessage) (Registry, bool) {
	t := stringField(m, "type")
	if t == "" {
		t = stringField(m, "mediaType")
	}
	if !isRegistryType(t) {
		return Registry{}, false
	}
	ep, err := SearchEndpoint(stringField(m, "url"))
	if err != nil {
		return Registry{}, false
	}
	r := Registry{
		Endpoint:    ep,
		Identifier:  stringField(m, "identifier"),
		DisplayName: stringField(m, "displayName"),
		Description: stringField(m, "description"),
		Learned:     LearnedUpstream,
	}
	_ = json.Unmarshal(m["tags"], &r.Tags)
	if r.Identifier == "" {
		r.Identifier = syntheticIdentifier(ep, "registry")
	}
	if r.DisplayName == "" {
		r.DisplayName = hostOf(ep)
	}
	return r, true
}

// validHit validates one upstream result through normalize and builds the hit.
func validHit(m map[string]json.RawMessage, endpoint string, trusted bool, now time.Time) (Hit, bool) {
	entry := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		entry[k] = v
	}
	for _, k := range reservedFields {
		delete(entry, k)
	}
	id := stringField(m, "identifier")
	if !wellFormed(entry) || !validEntry(entry, id) {
		return Hit{}, false
	}
	var score float64
	if json.Unmarshal(m["score"], &score) != nil {
		score = 0
	}
	origin := httpURL(stringField(m, "originService"))
	if origin == "" {
		origin = httpURL(stringField(m, "source"))
	}
	if origin == "" {
		origin = endpoint
	}
	var verified bool
	if trusted && json.Unmarshal(m["publisherVerified"], &verified) == nil && verified {
		entry["publisherVerified"] = json.RawMessage("true")
	}
	if trusted {
		relayTrustHealth(entry, m)
	}
	return Hit{
		Identifier:    id,
		Entry:         entry,
		Score:         score,
		Source:        endpoint,
		Verified:      verified,
		OriginService: origin,
		ReceivedAt:    now,
	}, true
}

// httpURL returns s when it is an absolute http(s) URL with a host and no
// user info, else "": an upstream's provenance label is passed on to our
// clients (web page included), so a javascript: or data: URL never is.
func httpURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return s
}

// wellFormed checks the §4.2 shape before normalize sees the entry:
// identifier, displayName and type are non-empty strings and exactly one of
// url (a string) and data (an object) is present.
func wellFormed(e map[string]json.RawMessage) bool {
	if stringField(e, "identifier") == "" || stringField(e, "displayName") == "" || stringField(e, "type") == "" {
		return false
	}
	u, hasURL := e["url"]
	d, hasData := e["data"]
	if hasURL == hasData {
		return false
	}
	if hasURL {
		var s string
		return json.Unmarshal(u, &s) == nil && s != ""
	}
	var obj map[string]json.RawMessage
	return json.Unmarshal(d, &obj) == nil && obj != nil
}

// validEntry runs entry, alone in a manifest, through normalize.Catalog: it
// is valid when normalize keeps a record with its identifier (or, for an
// inline catalog bundle that normalize flattens, when normalize reports no
// error on the entry itself and keeps some record).
func validEntry(entry map[string]json.RawMessage, id string) bool {
	doc, err := json.Marshal(map[string]any{"specVersion": "1.0", "entries": []any{entry}})
	if err != nil {
		return false
	}
	res := normalize.Catalog(doc, normalize.Options{})
	key := canonicalID(id)
	for _, r := range res.Records {
		if canonicalID(r.Identifier) == key {
			return true
		}
	}
	if normalize.CanonicalType(stringField(entry, "type")) != "application/ai-catalog+json" || len(res.Records) == 0 {
		return false
	}
	for _, p := range res.Problems {
		if p.Severity != normalize.SeverityError {
			continue
		}
		if p.Path == "$" || p.Path == "entries[0]" || (strings.HasPrefix(p.Path, "entries[0].") && !strings.HasPrefix(p.Path, "entries[0].data")) {
			return false
		}
	}
	return true
}

// canonicalID is the dedupe key of an identifier (normalize's canonical
// form): urn:air: and urn:ai: name the same agent, and the URN prefix, NID
// and publisher are case-insensitive.
func canonicalID(id string) string {
	return normalize.CanonicalIdentifier(id)
}

// stringField returns m[k] when it is a JSON string, else "".
func stringField(m map[string]json.RawMessage, k string) string {
	var s string
	if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

// isTimeout reports whether err is a deadline (ours or the client's).
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
