package searchapi

import (
	"encoding/json"
	"errors"
	"strconv"
)

// A small reader for JSON that is already known to be valid (Meilisearch's
// answers, checked by the client's decoding into json.RawMessage): it splits
// objects and arrays into raw members without reflection, maps of
// interfaces or copies. Search answers pass through here on every request.

var errRawJSON = errors.New("searchapi: malformed JSON from Meilisearch")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errRawJSON
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, errRawJSON
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errRawJSON
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
		j++
	}
	if j == i {
		return 0, errRawJSON
	}
	return j, nil
}

// eachMember calls fn for each member of the object b.
func eachMember(b []byte, fn func(key string, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errRawJSON
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errRawJSON
		}
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		rawKey := b[i:end]
		key := string(rawKey[1 : len(rawKey)-1])
		for _, c := range rawKey[1 : len(rawKey)-1] {
			if c == '\\' {
				if err := json.Unmarshal(rawKey, &key); err != nil {
					return errRawJSON
				}
				break
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errRawJSON
		}
		i = skipSpace(b, i+1)
		vend, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(key, b[i:vend]); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errRawJSON
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return errRawJSON
		}
		i = skipSpace(b, i+1)
	}
}

// eachElement calls fn for each element of the array b.
func eachElement(b []byte, fn func(val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errRawJSON
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errRawJSON
		}
		if b[i] == ']' {
			return nil
		}
		if b[i] != ',' {
			return errRawJSON
		}
		i = skipSpace(b, i+1)
	}
}

// decodeSearchResponse reads a Meilisearch search answer.
func decodeSearchResponse(b []byte) (*meiliSearchResponse, error) {
	var resp meiliSearchResponse
	err := eachMember(b, func(key string, val []byte) error {
		switch key {
		case "hits":
			return eachElement(val, func(hit []byte) error {
				h := make(meiliHit, 24)
				if err := eachMember(hit, func(k string, v []byte) error {
					h[k] = json.RawMessage(v)
					return nil
				}); err != nil {
					return err
				}
				resp.Hits = append(resp.Hits, h)
				return nil
			})
		case "estimatedTotalHits":
			n, err := strconv.ParseInt(string(val), 10, 64)
			resp.EstimatedTotalHits = n
			return err
		case "totalHits":
			n, err := strconv.ParseInt(string(val), 10, 64)
			resp.TotalHits = n
			return err
		case "facetDistribution":
			resp.FacetDistribution = json.RawMessage(val)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &resp, nil
}
