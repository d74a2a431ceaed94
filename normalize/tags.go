package normalize

import "strings"

// NormalizeTags lower-cases and trims tags, collapses inner whitespace, and
// drops empty and repeated ones, keeping first-seen order. It returns nil for
// no tags.
func NormalizeTags(tags []string) []string {
	var out []string
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.Join(strings.Fields(t), " "))
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// appendUnique appends the non-empty values of add to list that it does not
// hold yet (trimmed, compared exactly).
func appendUnique(list []string, add ...string) []string {
	for _, a := range add {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		dup := false
		for _, l := range list {
			if l == a {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, a)
		}
	}
	return list
}
