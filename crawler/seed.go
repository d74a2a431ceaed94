package crawler

import (
	"fmt"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// Seed is one parsed seed: what to crawl and who may see what it yields.
type Seed struct {
	// Target is a domain (optionally with a port) or a catalog URL.
	Target string
	// Groups may see the records of the seed's catalogs (their
	// normalize.Record.Visibility); empty means public.
	Groups []string
}

// ParseSeed reads one seed as a seeds file line or a --seed value holds it:
// the domain or URL, then optional options separated by spaces; the one
// option is groups=a,b ("hr.corp.example groups=hr,people").
func ParseSeed(s string) (Seed, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Seed{}, fmt.Errorf("empty seed")
	}
	sd := Seed{Target: fields[0]}
	for _, opt := range fields[1:] {
		k, v, ok := strings.Cut(opt, "=")
		if !ok || k != "groups" {
			return Seed{}, fmt.Errorf("seed %s: unknown option %q (want groups=a,b)", sd.Target, opt)
		}
		if sd.Groups != nil {
			return Seed{}, fmt.Errorf("seed %s: groups= given twice", sd.Target)
		}
		g, err := normalize.ParseGroupList(v)
		if err != nil {
			return Seed{}, fmt.Errorf("seed %s: %w", sd.Target, err)
		}
		sd.Groups = g
	}
	return sd, nil
}
