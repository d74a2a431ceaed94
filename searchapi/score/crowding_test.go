package score

import (
	"slices"
	"testing"
)

func TestCrowd(t *testing.T) {
	m := Model{Crowding: 2}
	for _, c := range []struct {
		name      string
		providers []string
		kept      []bool
		want      []int
	}{
		{"a provider's third result moves behind the others shown",
			[]string{"dir", "dir", "dir", "b", "dir", "c"}, []bool{true, true, true, true, true, true}, []int{0, 1, 3, 5, 2, 4}},
		{"one provider keeps its order",
			[]string{"dir", "dir", "dir", "dir"}, []bool{true, true, true, true}, []int{0, 1, 2, 3}},
		{"results of no known provider are never moved",
			[]string{"", "", "", "b"}, []bool{true, true, true, true}, []int{0, 1, 2, 3}},
		{"a result the cut-off rule hides does not move ahead of a crowded one",
			[]string{"dir", "dir", "dir", "b"}, []bool{true, true, true, false}, []int{0, 1, 2, 3}},
		{"nothing crowded: the order as given, hidden results included",
			[]string{"a", "b", "a"}, []bool{true, false, true}, []int{0, 1, 2}},
		{"crowded behind the shown, before the hidden",
			[]string{"dir", "dir", "dir", "b", "c"}, []bool{true, true, true, true, false}, []int{0, 1, 3, 2, 4}},
	} {
		if got := m.Crowd(c.providers, c.kept); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	if got := (&Model{}).Crowd([]string{"a", "a", "a", "b"}, []bool{true, true, true, true}); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("Crowding 0: %v, want the order kept", got)
	}
}
