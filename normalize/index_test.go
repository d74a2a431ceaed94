package normalize

import (
	"slices"
	"strconv"
	"testing"
)

func TestEmbeddedTexts(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = " q" + strconv.Itoa(i) + " "
	}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"trimmed, empty skipped", EmbeddedQueries([]string{" a ", "", "  ", "b"}), []string{"a", "b"}},
		{"queries capped", EmbeddedQueries(many)[MaxEmbeddedQueries-1:], []string{"q" + strconv.Itoa(MaxEmbeddedQueries-1)}},
		{"none", EmbeddedQueries(nil), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.got, tc.want) {
				t.Fatalf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestFilterableFieldsCoverFiltersAndFacets(t *testing.T) {
	all := FilterableFields()
	if !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("FilterableFields not sorted and distinct: %q", all)
	}
	for name, f := range FilterFields {
		if !slices.Contains(all, f.Field) {
			t.Errorf("filter %s: field %s not filterable", name, f.Field)
		}
	}
	for name, f := range FacetFields {
		if !slices.Contains(all, f) {
			t.Errorf("facet %s: field %s not filterable", name, f)
		}
	}
	if got := SortableFields(); len(got) != len(SortFields) {
		t.Fatalf("SortableFields = %q", got)
	}
}

func TestEntryText(t *testing.T) {
	rec := Record{DisplayName: "Weather", Description: "forecasts", Capabilities: []string{"a", "b"},
		SkillNames: []string{"get_forecast"}, Tags: []string{"weather"}}
	if got, want := EntryText(rec), "Weather\nforecasts\na, b\nget_forecast\nweather"; got != want {
		t.Fatalf("EntryText = %q, want %q", got, want)
	}
	if got := EntryText(Record{}); got != "" {
		t.Fatalf("EntryText(empty) = %q", got)
	}
}
