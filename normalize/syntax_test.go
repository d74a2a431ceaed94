package normalize

import (
	"strings"
	"testing"
)

// TestInvalidJSONNamesLineAndColumn: a syntax error says where it is.
func TestInvalidJSONNamesLineAndColumn(t *testing.T) {
	cases := []struct {
		body, want string
	}{
		{"{\n  \"specVersion\": \"1.0\",\n  \"entries\": [\n    {\"identifier\": \"x\",}\n  ]\n}\n", "line 4, column 24: invalid character '}'"},
		{`{"entries": [}`, "line 1, column 14: invalid character '}'"},
		{"{\n  \"entries\": [", "line 2, column 14: unexpected end of JSON input"},
	}
	for _, c := range cases {
		res := Catalog([]byte(c.body), Options{})
		if len(res.Problems) != 1 || res.Problems[0].Code != CodeInvalidJSON {
			t.Fatalf("%q: problems %+v, want one %s", c.body, res.Problems, CodeInvalidJSON)
		}
		if msg := res.Problems[0].Message; !strings.Contains(msg, c.want) {
			t.Errorf("%q: message %q, want it to contain %q", c.body, msg, c.want)
		}
	}
}
