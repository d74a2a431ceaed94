package crawler_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// sumOf sums family name's counter values and histogram sample counts over
// the series whose labels include want.
func sumOf(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				sum += m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

func TestMetrics(t *testing.T) {
	web := startWeb(t)
	reg := prometheus.NewRegistry()
	cfg := webConfig(web)
	cfg.Metrics = reg
	c := newCrawler(t, cfg, &crawlertest.Collector{})
	rep := crawl(t, c, fixtures.HostRobotsOnly)

	if n := testutil.CollectAndCount(reg, "agentfinder_crawler_robots_disallowed_total"); n != 1 {
		t.Fatalf("robots disallowed series = %d", n)
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"agentfinder_crawler_robots_disallowed_total", nil, 1},
		{"agentfinder_crawler_fetches_total", nil, float64(rep.Totals.Catalogs)},
		{"agentfinder_crawler_fetches_total", map[string]string{"status": string(normalize.StatusFailed), "reason": crawler.ReasonRobotsDisallowed}, float64(rep.Totals.Reasons[crawler.ReasonRobotsDisallowed])},
		{"agentfinder_crawler_fetches_total", map[string]string{"status": string(normalize.StatusOK)}, float64(rep.Totals.OK)},
		{"agentfinder_crawler_fetch_duration_seconds", nil, float64(rep.Totals.Requests)},
		{"agentfinder_crawler_catalogs_per_crawl", nil, 1},
	}
	for _, ck := range checks {
		if got := sumOf(t, reg, ck.name, ck.labels); got != ck.want {
			t.Errorf("%s%v = %v, want %v", ck.name, ck.labels, got, ck.want)
		}
	}
	if rep.Totals.OK == 0 || rep.Totals.Reasons[crawler.ReasonRobotsDisallowed] == 0 {
		t.Fatalf("fixture no longer has both ok and disallowed catalogs: %+v", rep.Totals)
	}
	if got := sumOf(t, reg, "agentfinder_crawler_fetched_bytes_total", nil); got <= 0 {
		t.Errorf("fetched bytes = %v", got)
	}

	// A second crawler cannot take the same names; without a registry
	// there are no metrics and no error.
	if _, err := crawler.New(cfg, nil, nil); err == nil {
		t.Errorf("second crawler registered the same metrics")
	}
	cfg.Metrics = nil
	c2, err := crawler.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
}
