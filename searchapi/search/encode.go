package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentfinder/agentfinder/federation"
)

// Encode encodes the answer as POST /search's: {"results", "referrals",
// "upstreams" (federating modes only), "pageToken", "reason" (why results
// is empty, when the cut-off emptied it)}. Entries are written key
// by key (sorted, as encoding/json would) from their raw JSON values, which
// come from Meilisearch or from json.Marshal: re-encoding them through
// encoding/json would validate and compact every byte again, a cost the
// latency budget of the endpoint cannot carry. Values of upstream entries
// are checked with json.Valid first and dropped when invalid.
func (ans *Answer) Encode() []byte {
	buf := bytes.NewBuffer(make([]byte, 0, 1024+len(ans.Hits)*1024))
	buf.WriteString(`{"results":[`)
	n := 0
	keys := make([]string, 0, 32)
	for _, h := range ans.Hits {
		if h.Entry == nil {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		keys = writeEntry(buf, h, keys)
	}
	buf.WriteString(`],"referrals":`)
	writeMarshal(buf, ans.Referrals, "[]")
	if ans.Federated {
		buf.WriteString(`,"upstreams":`)
		writeMarshal(buf, ans.Upstreams, "[]")
	}
	if ans.PageToken != "" {
		buf.WriteString(`,"pageToken":`)
		writeJSONString(buf, ans.PageToken)
	}
	if ans.Reason != "" {
		buf.WriteString(`,"reason":`)
		writeJSONString(buf, ans.Reason)
	}
	buf.WriteString("}\n")
	return buf.Bytes()
}

// writeEntry writes h's entry as an object, its members sorted by key,
// leaving out the values that are empty and, for an upstream's entry, those
// that are not valid JSON. keys is scratch space, returned for reuse.
func writeEntry(buf *bytes.Buffer, h federation.Hit, keys []string) []string {
	keys = keys[:0]
	for k := range h.Entry {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf.WriteByte('{')
	first := true
	for _, k := range keys {
		v := h.Entry[k]
		if len(v) == 0 || (!h.Local && !json.Valid(v)) {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		writeJSONString(buf, k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return keys
}

// Shown is the answer as the readers of Encode's bytes show it
// (federation.SearchAnswer's Shown), read from the answer's values: of a
// local result, only the members it shows are decoded
// (federation.ShownEntry), the rest of the answer is not encoded and read
// back. An upstream's result, whose members may be named in any case
// (encoding/json matches them regardless), is read from its entry as
// Encode writes it.
func (ans *Answer) Shown() (*federation.ShownAnswer, error) {
	shown := &federation.ShownAnswer{Results: make([]federation.SearchResult, 0, len(ans.Hits)), PageToken: ans.PageToken, Reason: ans.Reason}
	var buf bytes.Buffer
	for _, h := range ans.Hits {
		if h.Entry == nil {
			continue
		}
		var r federation.SearchResult
		var err error
		if h.Local {
			r, err = federation.ShownEntry(h.Entry)
		} else {
			buf.Reset()
			writeEntry(&buf, h, nil)
			err = json.Unmarshal(buf.Bytes(), &r)
		}
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", len(shown.Results), err)
		}
		shown.Results = append(shown.Results, r)
	}
	for _, r := range ans.Referrals {
		if !json.Valid(r) {
			return shown, nil // Encode writes no referrals then (writeMarshal)
		}
	}
	referrals := federation.SearchAnswer{Referrals: ans.Referrals}
	var err error
	if shown.Referrals, err = referrals.ShownReferrals(); err != nil {
		return nil, err
	}
	return shown, nil
}

// writeMarshal writes v as JSON, or empty when v is a nil slice or fails.
func writeMarshal[T any](buf *bytes.Buffer, v []T, empty string) {
	if len(v) == 0 {
		buf.WriteString(empty)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		buf.WriteString(empty)
		return
	}
	buf.Write(b)
}

// writeJSONString writes s as a JSON string.
func writeJSONString(buf *bytes.Buffer, s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			simple = false
			break
		}
	}
	if simple {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s)
	buf.Write(b)
}
