package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/normalize"
)

// toolLimits bound what one server's tool list may cost.
type toolLimits struct {
	maxTools int
	maxBytes int64
	maxPages int
	now      func() normalize.ToolSet // an empty set stamped with the time
	// sse, when set, lists the tools of SSE remotes (listToolsSSE): the
	// crawler's HTTP client.
	sse *http.Client
}

// toolsPage is one tools/list result.
type toolsPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor"`
}

// listTools reads the server's tools/list, page after page, within lim:
// at most maxTools tools, maxBytes of answers and maxPages pages. Reaching a
// bound keeps what was read and says which bound in Truncated; a cursor
// seen before ends the list. An error means no list was read at all.
func (c *mcpConn) listTools(ctx context.Context, lim *toolLimits) (*normalize.ToolSet, error) {
	ts := lim.now()
	budget := lim.maxBytes
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == lim.maxPages {
			ts.Truncated = normalize.TruncatedPages
			break
		}
		params := map[string]any{}
		if c.stateless {
			params = c.meta()
		}
		if cursor != "" {
			params["cursor"] = cursor
		}
		a, err := c.call(ctx, "tools/list", params, budget)
		switch {
		case errors.Is(err, crawler.ErrTooLarge):
			ts.Truncated = normalize.TruncatedBytes
			return finish(&ts), nil
		case err != nil:
			return nil, fmt.Errorf("%s", crawler.Reason(err))
		case a.err != nil:
			return nil, a.err
		case a.reply.Error != nil:
			return nil, a.reply.Error
		}
		budget -= int64(len(a.res.Body))
		var p toolsPage
		if err := json.Unmarshal(a.reply.Result, &p); err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		if full := add(&ts, p.Tools, lim.maxTools); full {
			ts.Truncated = normalize.TruncatedTools
			break
		}
		if p.NextCursor == "" || seen[p.NextCursor] {
			break
		}
		if budget <= 0 {
			ts.Truncated = normalize.TruncatedBytes
			break
		}
		seen[p.NextCursor], cursor = true, p.NextCursor
	}
	return finish(&ts), nil
}

// add appends a page's tools to ts, up to max, and reports whether the
// list is full. A tool without a name is a problem, not a tool.
func add(ts *normalize.ToolSet, raw []json.RawMessage, max int) bool {
	for _, r := range raw {
		ts.Listed++
		t, err := normalize.DecodeTool(r)
		if err != nil {
			if len(ts.Problems) < 16 {
				ts.Problems = append(ts.Problems, normalize.Problem{Path: fmt.Sprintf("tools.listed[%d]", ts.Listed-1),
					Code: normalize.CodeInvalidTool, Severity: normalize.SeverityWarning, Message: err.Error()})
			}
			continue
		}
		if len(ts.Items) == max {
			return true
		}
		ts.Items = append(ts.Items, t)
	}
	return false
}

// finish marks the tools whose text tries to instruct its reader.
func finish(ts *normalize.ToolSet) *normalize.ToolSet {
	if ts.Items == nil {
		ts.Items = []normalize.Tool{}
	}
	normalize.MarkTools(ts)
	return ts
}
