package searchapi

import (
	"sync"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// openAPI is the server's openapi.json as searchtest checks answers
// against it.
var openAPI = sync.OnceValues(func() (*searchtest.OpenAPI, error) { return searchtest.NewOpenAPI(openAPIDoc) })

// conformOpenAPI checks a real response against openapi.json
// (searchtest.OpenAPI.Conform).
func conformOpenAPI(t testing.TB, method, path string, status int, body []byte) {
	t.Helper()
	set, err := openAPI()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	set.Conform(t, method, path, status, body)
}
