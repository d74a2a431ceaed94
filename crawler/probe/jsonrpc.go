package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// rpcReply is the JSON-RPC response an MCP endpoint gave to one request.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// rpcMessage is one JSON-RPC message of an answer (a response, or a
// request or notification the server sent on the same stream).
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// rpcRequest encodes a JSON-RPC request.
func rpcRequest(id int, method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}) // maps of strings and numbers always marshal
	return b
}

// rpcNotification encodes a JSON-RPC notification.
func rpcNotification(method string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	return b
}

// notRPC says what an answer that holds no JSON-RPC response was: an HTML
// page, a JSON document of another API, or something else.
type notRPC struct{ what string }

func (e *notRPC) Error() string { return e.what }

// readReply finds the response to request id in an answer's body: a JSON
// document, or an event stream (text/event-stream) whose data lines carry
// messages. An answer holding no such response is a *notRPC.
func readReply(h http.Header, body []byte, id int) (*rpcReply, error) {
	ct, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	var msgs [][]byte
	switch {
	case ct == "text/event-stream":
		msgs = sseData(body)
	case ct == "text/html" || ct == "application/xhtml+xml" || looksHTML(body):
		return nil, &notRPC{"an HTML page"}
	default:
		msgs = [][]byte{body}
	}
	want := []byte(fmt.Sprint(id))
	sawJSON := false
	for _, m := range msgs {
		var msg rpcMessage
		if err := jsonUnmarshal(m, &msg); err != nil {
			continue
		}
		sawJSON = true
		if msg.JSONRPC == "2.0" && bytes.Equal(bytes.TrimSpace(msg.ID), want) && (msg.Result != nil || msg.Error != nil) {
			return &rpcReply{Result: msg.Result, Error: msg.Error}, nil
		}
	}
	if sawJSON {
		return nil, &notRPC{"a JSON document that is no JSON-RPC answer"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &notRPC{"an empty answer"}
	}
	return nil, &notRPC{"no JSON-RPC answer (" + firstOr(ct, "no content type") + ")"}
}

// jsonUnmarshal decodes data into v, refusing anything but an object.
func jsonUnmarshal(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	return json.Unmarshal(data, v)
}

// sseData returns the data of each event of an event stream (data lines
// joined by newlines, as the EventSource rules say).
func sseData(body []byte) [][]byte {
	var out [][]byte
	var cur []byte
	has := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), len(body)+1)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if has {
				out = append(out, cur)
			}
			cur, has = nil, false
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if has {
				cur = append(cur, '\n')
			}
			cur, has = append(cur, d...), true
		}
	}
	if has {
		out = append(out, cur)
	}
	return out
}

func looksHTML(body []byte) bool {
	b := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 512)]))
	return bytes.HasPrefix(b, []byte("<!doctype html")) || bytes.HasPrefix(b, []byte("<html"))
}

func firstOr(s, alt string) string {
	if strings.TrimSpace(s) == "" {
		return alt
	}
	return s
}
