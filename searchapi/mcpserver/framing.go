package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one message read from stdio (StdioTransport).
const MaxLineBytes = 4 << 20

// refusal is the JSON-RPC error answer to a message this server does not
// take, or nil for a single JSON-RPC message. It is the one framing rule of
// both transports:
//   - text that is not JSON is a parse error (-32700);
//   - a batch (a JSON array) is an invalid request (-32600): batches are not
//     part of the MCP version served (2025-06-18 removed them), and one
//     message holding hundreds of tool calls would run them all past the
//     per-request rate limit and search slots;
//   - JSON that is no JSON-RPC message is an invalid request too.
func refusal(msg []byte) []byte {
	msg = bytes.TrimSpace(msg)
	if !json.Valid(msg) {
		return errorAnswer(nil, jsonrpc.CodeParseError, "parse error: the message is not JSON")
	}
	if msg[0] == '[' {
		return errorAnswer(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message at a time")
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return errorAnswer(idOf(msg), jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message")
	}
	return nil
}

// idOf is msg's "id" when it is a valid request id, else null.
func idOf(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	if _, err := jsonrpc.MakeID(v); err != nil {
		return nil
	}
	return m.ID
}

// errorAnswer is a JSON-RPC error response with id (nil: null).
func errorAnswer(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: message}})
	return b
}

// peekBody reads r's body when it holds at most maxBody bytes (ok) and
// leaves r.Body as it was, read again from its start: a longer body goes on
// read no further than maxBody+1 bytes, for the SDK to refuse by size.
func peekBody(r *http.Request, maxBody int64) (body []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	return body, err == nil && int64(len(body)) <= maxBody
}

// refuseMalformed answers a POST whose body refusal refuses with its error
// (HTTP 400) before the SDK sees it; other requests go to h with their body
// intact. Bodies over maxBody go to h unread beyond maxBody+1 bytes: the SDK
// refuses them by size.
func refuseMalformed(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		if body, ok := peekBody(r, maxBody); ok {
			if answer := refusal(body); answer != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(answer)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// StdioTransport is the MCP stdio transport over in and out (stdin and
// stdout for `agentfinder mcp`) that answers a line it does not take (see
// refusal: not JSON, a batch, not JSON-RPC) with a JSON-RPC error and reads
// on, where the SDK's own transport ends the session at the first such
// line. A line longer than MaxLineBytes ends it. Connect starts a goroutine
// reading in; it ends when in ends, or when the session has closed and one
// more line arrives.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	return &stdioTransport{in: in, out: out}
}

type stdioTransport struct {
	in  io.Reader
	out io.Writer
}

// Connect implements mcp.Transport.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: t.out}
	go filterLines(t.in, pw, w)
	return (&mcp.IOTransport{Reader: pr, Writer: w}).Connect(ctx)
}

// filterLines copies the lines of in that refusal takes to pw and answers
// the others on out.
func filterLines(in io.Reader, pw *io.PipeWriter, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if answer := refusal(line); answer != nil {
			if _, err := out.Write(append(answer, '\n')); err != nil {
				pw.CloseWithError(err)
				return
			}
			continue
		}
		if _, err := pw.Write(append(line, '\n')); err != nil {
			return // the session closed its end
		}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		_, _ = out.Write(append(errorAnswer(nil, jsonrpc.CodeParseError, "parse error: a line is longer than the limit"), '\n'))
	}
	pw.CloseWithError(err) // nil: io.EOF for the reader
}

// lockedWriter serializes writes: the session's answers and the refusals
// of filterLines share stdout, one whole message per Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close implements io.Closer; stdout stays open.
func (l *lockedWriter) Close() error { return nil }
