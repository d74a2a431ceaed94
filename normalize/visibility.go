package normalize

import (
	"fmt"
	"slices"
	"strings"
)

// Groups returns group names as records and callers carry them: trimmed,
// lower-case, sorted, without repeats or empty names. It is the one rule both
// sides of a visibility check use, so "HR" in a seed and "hr" in a token match.
func Groups(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseGroupList reads the value of a seed's groups= option: group names
// separated by commas. A name holds no space or quote.
func ParseGroupList(v string) ([]string, error) {
	var names []string
	for n := range strings.SplitSeq(v, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if strings.ContainsAny(n, " \t\"'\\") {
			return nil, fmt.Errorf("group %q: a group name holds no space, quote or backslash", n)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("groups=%q names no group", v)
	}
	return Groups(names), nil
}

// RecordKey returns the document key of a record of identifier that only
// visibility may see (empty: everyone): DocID(identifier) for a public
// record, a key of its own for each group set otherwise. Claims on one
// identifier compete for one document only when the same callers may see
// them: a record hidden from a caller never suppresses, and is never
// merged with, a claim that caller may see (else whether a public claim
// shows would tell outsiders which hidden identifiers exist), and a
// record's lost claims never name a catalog its readers may not see.
func RecordKey(identifier string, visibility []string) string {
	g := Groups(visibility)
	if len(g) == 0 {
		return DocID(identifier)
	}
	return DocID(CanonicalIdentifier(identifier) + "\n" + strings.Join(g, ","))
}
