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
