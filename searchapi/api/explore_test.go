package api

import (
	"testing"
)

func TestBuckets(t *testing.T) {
	got := buckets(map[string]int{"a": 5, "b": 5, "c": 2, "d": 1}, 2, 1)
	if len(got.Buckets) != 2 || got.Buckets[0] != (ARDBucket{"a", 5}) || got.Buckets[1] != (ARDBucket{"b", 5}) || got.OtherCount != 3 {
		t.Errorf("limit 2: %+v", got)
	}
	got = buckets(map[string]int{"a": 5, "c": 2, "d": 1}, 20, 2)
	if len(got.Buckets) != 2 || got.OtherCount != 1 {
		t.Errorf("minCount 2: %+v", got)
	}
	if got := buckets(nil, 20, 1); got.Buckets == nil || got.OtherCount != 0 {
		t.Errorf("no values: %+v (buckets must be [] not null)", got)
	}
}
