package probe

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestReadReply(t *testing.T) {
	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\n" + "data: \"result\":{\"ok\":true}}\n\n"
	cases := []struct {
		name, ct, body string
		id             int
		ok             bool
		not            string
	}{
		{"json", "application/json", `{"jsonrpc":"2.0","id":3,"result":{}}`, 3, true, ""},
		{"event stream, data split over lines", "text/event-stream", sse, 3, true, ""},
		{"another id", "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, 3, false, "JSON document"},
		{"html", "text/html", "<html><body>hi</body></html>", 1, false, "HTML page"},
		{"html as json", "application/json", "<!DOCTYPE html><html></html>", 1, false, "HTML page"},
		{"json api", "application/json", `{"status":"ok","items":[]}`, 1, false, "JSON document"},
		{"empty", "", "", 1, false, "empty"},
	}
	for _, c := range cases {
		h := http.Header{}
		h.Set("Content-Type", c.ct)
		r, err := readReply(h, []byte(c.body), c.id)
		if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.not)) {
			t.Errorf("%s: %+v, %v; want ok %v or an error containing %q", c.name, r, err, c.ok, c.not)
		}
	}
}

func TestChallenge(t *testing.T) {
	scheme, p := challenge(`Bearer realm="api", resource_metadata="https://a.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error=invalid_token`)
	if scheme != "Bearer" || p["realm"] != "api" || p["resource_metadata"] != "https://a.test/.well-known/oauth-protected-resource/mcp" ||
		p["scope"] != "files:read files:write" || p["error"] != "invalid_token" {
		t.Errorf("challenge: %q %v", scheme, p)
	}
	if scheme, p := challenge(`Basic realm="a \"quoted\" realm"`); scheme != "Basic" || p["realm"] != `a "quoted" realm` {
		t.Errorf("basic: %q %v", scheme, p)
	}
	if got := metadataURLs("https://a.test/v1/mcp", ""); !slices.Equal(got, []string{
		"https://a.test/.well-known/oauth-protected-resource/v1/mcp", "https://a.test/.well-known/oauth-protected-resource"}) {
		t.Errorf("metadata URLs %v", got)
	}
	if got := metadataURLs("https://a.test/mcp", "javascript:alert(1)"); got != nil {
		t.Errorf("a named metadata URL that is not http(s) is fetched: %v", got)
	}
}
