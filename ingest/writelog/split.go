package writelog

import (
	"bytes"
	"encoding/json"
)

// splitArray cuts a JSON array into arrays of at most max bytes (an
// element larger than max goes alone). A body that is not a valid array
// stays whole: Meilisearch will refuse it with its own error.
func splitArray(body []byte, max int) [][]byte {
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return [][]byte{body}
	}
	var out [][]byte
	var cur bytes.Buffer
	flush := func() {
		if cur.Len() > 0 {
			cur.WriteByte(']')
			out = append(out, bytes.Clone(cur.Bytes()))
			cur.Reset()
		}
	}
	for _, e := range elems {
		if cur.Len() > 0 && cur.Len()+len(e)+2 > max {
			flush()
		}
		if cur.Len() == 0 {
			cur.WriteByte('[')
		} else {
			cur.WriteByte(',')
		}
		cur.Write(e)
	}
	flush()
	return out
}
