package crawler

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// Seed is one parsed seed: what to crawl and who may see what it yields.
type Seed struct {
	// Target is a domain (optionally with a port) or a catalog URL; for
	// an MCP registry seed, the registry's base URL.
	Target string
	// Registry says Target is an MCP registry to walk through its server
	// list API (a seed written "registry https://registry.example.com").
	Registry bool
	// Groups may see the records of the seed's catalogs (their
	// normalize.Record.Visibility); empty means public.
	Groups []string
}

// RegistrySeedWord starts a seed that names an MCP registry.
const RegistrySeedWord = "registry"

// ParseSeed reads one seed as a seeds file line or a --seed value holds it:
// the domain or URL, then optional options separated by spaces; the one
// option is groups=a,b ("hr.corp.example groups=hr,people"). A seed
// starting with the word "registry" names an MCP registry by its base URL
// ("registry https://registry.modelcontextprotocol.io groups=dev").
func ParseSeed(s string) (Seed, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Seed{}, fmt.Errorf("empty seed")
	}
	sd := Seed{Target: fields[0]}
	if fields[0] == RegistrySeedWord {
		if len(fields) < 2 {
			return Seed{}, fmt.Errorf("registry seed: want registry https://registry.example.com")
		}
		u, err := parseHTTPURL(fields[1])
		if err != nil || u.RawQuery != "" {
			return Seed{}, fmt.Errorf("registry seed %q: want the registry's base URL, http or https, without a query", fields[1])
		}
		sd.Target, sd.Registry = strings.TrimSuffix(u.String(), "/"), true
		fields = fields[1:]
	}
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

// String is the seed as a seeds file line holds it (ParseSeed reads it
// back): "registry" for a registry seed, the target, then groups=a,b when
// it has groups.
func (sd Seed) String() string {
	s := sd.Target
	if sd.Registry {
		s = RegistrySeedWord + " " + s
	}
	if len(sd.Groups) > 0 {
		s += " groups=" + strings.Join(sd.Groups, ",")
	}
	return s
}

// Host is the lower-case host name (no port, no trailing dot) the seed's
// target names, whether it is a domain or a URL; "" when it names none.
func (sd Seed) Host() string {
	raw := sd.Target
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}
