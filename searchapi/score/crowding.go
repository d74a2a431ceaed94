package score

// Crowd returns the order in which to show results (indexes into providers
// and kept, given in the answer's order) so that one provider's many
// records do not fill a page: the results Keep shows (kept) with at most
// m.Crowding of each provider, then the kept results of providers already
// holding that many, then the rest, each part in its order. A result of no
// known provider ("") is never moved; with no result to move (Crowding 0,
// or no provider over it) the order is kept as given. Nothing is dropped
// and no score changes, and an answer whose results all come from one
// provider shows them in its order. Every door orders its results through
// this one rule.
func (m *Model) Crowd(providers []string, kept []bool) []int {
	var front, crowded, rest []int
	seen := map[string]int{}
	for i, p := range providers {
		switch {
		case !kept[i]:
			rest = append(rest, i)
		case m.Crowding > 0 && p != "" && seen[p] >= m.Crowding:
			crowded = append(crowded, i)
		default:
			seen[p]++
			front = append(front, i)
		}
	}
	if len(crowded) == 0 {
		return inOrder(len(providers))
	}
	return append(append(front, crowded...), rest...)
}

// inOrder is 0, 1, ..., n-1.
func inOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
