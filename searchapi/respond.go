package searchapi

import (
	"net/http"

	"github.com/agentfinder/agentfinder/searchapi/search"
)

// writeSearch writes POST /search's answer (search.Answer.Encode).
func writeSearch(w http.ResponseWriter, ans *search.Answer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ans.Encode())
}
