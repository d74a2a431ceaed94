package crawler

// wellKnownPaths are probed on every seed domain: the Agent Finder name and
// the ARD successor name.
var wellKnownPaths = []string{"/.well-known/ai-catalog.json", "/.well-known/ard.json"}

// wellKnownURLs returns the well-known catalog URLs of a domain.
func wellKnownURLs(domain string) []string {
	out := make([]string, 0, len(wellKnownPaths))
	for _, p := range wellKnownPaths {
		out = append(out, "https://"+domain+p)
	}
	return out
}
