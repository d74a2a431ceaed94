package filterlang

import (
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// sortAliases are the spellings orderBy accepts, lower-case, for the names
// of normalize.SortFields.
var sortAliases = map[string]string{
	"displayname": "displayName", "name": "displayName", "display_name": "displayName",
	"updatedat": "updatedAt", "updated_at": "updatedAt", "updated": "updatedAt",
	"indexedat": "indexedAt", "indexed_at": "indexedAt", "createdat": "indexedAt", "created_at": "indexedAt",
}

// OrderBy reads the orderBy parameter, "field [ASC|DESC], ..." into Meilisearch sort rules.
func OrderBy(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) == 0 || len(f) > 2 {
			return nil, invalid("orderBy: want \"field [ASC|DESC]\" items separated by commas")
		}
		field, ok := normalize.SortFields[sortAliases[strings.ToLower(f[0])]]
		if !ok {
			return nil, invalid("orderBy: cannot order by %q (use displayName, updatedAt or indexedAt)", f[0])
		}
		dir := "asc"
		if len(f) == 2 {
			switch strings.ToUpper(f[1]) {
			case "ASC":
			case "DESC":
				dir = "desc"
			default:
				return nil, invalid("orderBy: direction must be ASC or DESC, got %q", f[1])
			}
		}
		out = append(out, field+":"+dir)
	}
	if len(out) > 3 {
		return nil, invalid("orderBy: at most 3 fields")
	}
	return out, nil
}
