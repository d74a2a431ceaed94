package federation

import (
	"encoding/json"
	"testing"
)

// TestSearchAnswerReadsAsUpstreamsNeed: results, referrals and pageToken
// must have their types; "results" absent or null is told apart from an
// empty array; upstreams and reason that are not well formed are left
// empty without failing the answer.
func TestSearchAnswerReadsAsUpstreamsNeed(t *testing.T) {
	for _, tc := range []struct {
		body       string
		wantErr    bool
		hasResults bool
	}{
		{`{"results":[]}`, false, true},
		{`{"results":null}`, false, false},
		{`{}`, false, false},
		{`{"results":[],"upstreams":"not a list","reason":5}`, false, true},
		{`{"results":{}}`, true, false},
		{`{"results":[],"pageToken":7}`, true, false},
		{`{"results":[],"referrals":"x"}`, true, false},
	} {
		var a SearchAnswer
		err := json.Unmarshal([]byte(tc.body), &a)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v, want error %v", tc.body, err, tc.wantErr)
			continue
		}
		if err == nil && (a.Results != nil) != tc.hasResults {
			t.Errorf("%s: Results %v, want present %v", tc.body, a.Results, tc.hasResults)
		}
	}
}
