package searchapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentfinder/agentfinder/ingest/meili"
)

// fakeSupervisor is a Supervisor whose answer the test sets.
type fakeSupervisor struct {
	state string
	live  bool
}

func (f *fakeSupervisor) Health() (string, bool) { return f.state, f.live }

// TestHealthFollowsSupervisor: /readyz shows the supervised child's state,
// and /healthz fails only once the child cannot recover on its own.
func TestHealthFollowsSupervisor(t *testing.T) {
	sup := &fakeSupervisor{state: "restarting: exited (signal: killed)", live: true}
	srv, err := New(Config{Index: "x", Meili: meili.New("http://127.0.0.1:1", ""), Supervisor: sup}, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, map[string]any) {
		t.Helper()
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return rec.Code, body
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while the child restarts: %d, want 200", code)
	}
	code, body := get("/readyz")
	details, _ := body["details"].(map[string]any)
	if code != http.StatusServiceUnavailable || details["managedMeilisearch"] != sup.state {
		t.Errorf("/readyz = %d %v, want 503 with the child's state", code, body)
	}
	sup.state, sup.live = "failed: gave up after 5 failed restarts in a row", false
	code, body = get("/healthz")
	if code != http.StatusServiceUnavailable || body["status"] != "failed" || body["managedMeilisearch"] != sup.state {
		t.Errorf("/healthz after giving up = %d %v, want 503 failed with the state", code, body)
	}
}
