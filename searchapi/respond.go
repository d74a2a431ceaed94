package searchapi

import (
	"encoding/json"
	"net/http"

	"github.com/agentfinder/agentfinder/searchapi/search"
)

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// writeSearch writes POST /search's answer (search.Answer.Encode).
func writeSearch(w http.ResponseWriter, ans *search.Answer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ans.Encode())
}
