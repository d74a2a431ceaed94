package score

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestDistractorMisses reads what the distractors cost, request by
// request: for every dev request whose gold the served model and rule put
// in the first 10 of the set alone but not with the distractors (default
// cut-off, then minScore 0), why it fell out (out of the pool, pushed past
// place 10, or left out by the per-result rule) and which documents
// outrank it, with the evidence each wins by (semantic, keyword, both);
// then how each confidence feature moves between the worlds; then, for
// the documents in the most answers of each world, the requests whose
// first 10 hold them and by what evidence (with AGENTFINDER_SCORE_HUBS,
// searchapi/search's TestHubnessDump, also where they sit in their world).
// It reads the dumps TestFitWorlds reads and prints; a reader judges which
// outranking documents answer the request as well as the gold
// (docs/MEASUREMENTS.md). It fails when the requests lost less those
// gained differ from the Recall@10 the distractors cost.
//
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json AGENTFINDER_SCORE_DUMP_DISTRACTORS=/tmp/reld.json \
//	  AGENTFINDER_SCORE_HUBS=/tmp/hubs.json go test -count=1 -run TestDistractorMisses -v ./searchapi/score
func TestDistractorMisses(t *testing.T) {
	path, dpath := os.Getenv("AGENTFINDER_SCORE_DUMP"), os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS")
	if path == "" || dpath == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP and AGENTFINDER_SCORE_DUMP_DISTRACTORS to TestRelevanceDump's dumps")
	}
	m := Default
	alone := loadFit(t, path, "hybrid", 30, 5)
	with := loadFit(t, dpath, "hybrid", 30, 5)
	byID := map[string]*fitQuery{}
	for i := range with {
		if with[i].kind == "dev" {
			byID[with[i].id] = &with[i]
		}
	}
	for _, cut := range []int{m.MinScore, 0} {
		var tally missTally
		var set, dis answers
		for i := range alone {
			a := &alone[i]
			d := byID[a.id]
			if a.kind != "dev" || d == nil {
				continue
			}
			ka, kd := answer(&m, a, cut), answer(&m, d, cut)
			set.add(a, ka)
			dis.add(d, kd)
			inAlone, inWith := goldPlace(a, ka) >= 0, goldPlace(d, kd) >= 0
			if !inAlone && inWith {
				tally.gained++
			}
			if !inAlone || inWith {
				continue
			}
			tally.add(&m, a, d, cut)
		}
		tally.print(cut)
		// The requests lost less those gained are the Recall@10 the
		// distractors cost.
		if got, want := tally.n-tally.gained, int(math.Round(set.r10-dis.r10)); got != want {
			t.Errorf("cut %d: %d lost less %d gained is %d, but Recall@10 falls by %d requests (%v | %v)", cut, tally.n, tally.gained, got, want, &set, &dis)
		}
	}
	printConfidenceShift(&m, alone, byID)
	hubs := loadHubs(t)
	for w, qs := range [][]fitQuery{alone, with} {
		printHubs(&m, qs, []string{"set", "all"}[w], hubs)
	}
}

// goldPlace is the place of q's gold in the answer kept (-1: not in it).
func goldPlace(q *fitQuery, kept []int) int {
	for k, i := range kept {
		if q.gold[i] {
			return k
		}
	}
	return -1
}

// distractor reports whether id is one of the realworld distractors'
// records (relset.DistractorCatalogs publishes them on these hosts).
func distractor(id string) bool {
	return strings.Contains(id, "mcp-registry.eval.test") || strings.Contains(id, "a2a-cards.eval.test")
}

// missTally counts the misses of one world pair by cause and evidence.
type missTally struct {
	n, gained                int
	outOfPool, pushed, ruled int
	byEvidence               map[string]int
	byKind                   map[string]int
}

// evidence names what candidate i wins over candidate g by in rk: the
// semantic similarity, the ranker's cover terms (keyword), or both.
func evidence(m *Model, q *fitQuery, rk *Ranking, i, g int) string {
	sem := q.pool[i].Semantic > q.pool[g].Semantic
	cov := func(k int) float64 {
		return m.Ranker[rNameCover]*rk.feats[k][rNameCover] + m.Ranker[rTextCover]*rk.feats[k][rTextCover]
	}
	kw := cov(i) > cov(g)
	switch {
	case sem && kw:
		return "both"
	case sem:
		return "semantic"
	case kw:
		return "keyword"
	}
	return "neither"
}

// add prints and tallies the miss of q (the request with the
// distractors), alone the same request on the set alone.
func (t *missTally) add(m *Model, alone, q *fitQuery, cut int) {
	if t.byEvidence == nil {
		t.byEvidence, t.byKind = map[string]int{}, map[string]int{}
	}
	t.n++
	ra := m.Rank(&alone.req, alone.pool)
	first := ra.Order[0]
	fmt.Printf("alone: first %s %d, gold %d\n", alone.pool[first].Name, Percent(ra.Scores[first]), Percent(ra.Scores[slices.Index(alone.gold, true)]))
	rk := m.Rank(&q.req, q.pool)
	g := slices.Index(q.gold, true)
	if g < 0 {
		t.outOfPool++
		fmt.Printf("miss cut %d: %q: gold out of the pool of %d\n", cut, q.text, len(q.pool))
		t.describeAhead(m, q, rk, -1, 10)
		return
	}
	place := slices.Index(rk.Order, g)
	cause := "pushed"
	if place < 10 {
		cause = "ruled"
		t.ruled++
	} else {
		t.pushed++
	}
	fmt.Printf("miss cut %d: %q: gold %s at place %d (%s), score %d of best %d; sem %.3f name %.2f text %.2f\n",
		cut, q.text, q.pool[g].Name, place+1, cause, Percent(rk.Scores[g]), Percent(rk.Scores[rk.Order[0]]),
		q.pool[g].Semantic, rk.feats[g][rNameCover], rk.feats[g][rTextCover])
	t.describeAhead(m, q, rk, g, min(place, 10))
}

// describeAhead prints the first n of rk's order (those ahead of the gold
// g; g -1: the first n) and tallies their evidence against g.
func (t *missTally) describeAhead(m *Model, q *fitQuery, rk *Ranking, g, n int) {
	for _, i := range rk.Order[:min(n, len(rk.Order))] {
		ev := "-"
		if g >= 0 {
			ev = evidence(m, q, rk, i, g)
			t.byEvidence[ev]++
		}
		kind := "set"
		if distractor(q.ids[i]) {
			kind = "distractor"
		}
		t.byKind[kind]++
		desc := ""
		if len(q.pool[i].Text) > 0 {
			desc = q.pool[i].Text[0]
		}
		fmt.Printf("    %-10s %-8s %3d sem %.3f name %.2f text %.2f words %4d  %s: %.90s\n", kind, ev,
			Percent(rk.Scores[i]), q.pool[i].Semantic, rk.feats[i][rNameCover], rk.feats[i][rTextCover],
			wordsOf(&q.pool[i]).count(), q.pool[i].Name, desc)
	}
}

// print prints the tally of one cut-off.
func (t *missTally) print(cut int) {
	fmt.Printf("cut %d: %d requests lose their gold from the first 10 (%d gain it): %d out of the pool, %d pushed past place 10, %d left out by the per-result rule; ahead of the gold by evidence %v, by kind %v\n",
		cut, t.n, t.gained, t.outOfPool, t.pushed, t.ruled, t.byEvidence, t.byKind)
}

// printHubs prints the five documents in the most default answers of qs
// and, for each, the requests it is in and what it wins by there; with
// hubs (TestHubnessDump's, AGENTFINDER_SCORE_HUBS) also how many of those
// requests' gold is the hub or one of its 20 nearest documents in world
// (a topical neighbour of the answer) and where the hub sits against the
// rest of its world.
func printHubs(m *Model, qs []fitQuery, world string, hubs *hubDump) {
	in := map[string][]string{}
	near, semOnly, semTop5 := map[string]int{}, map[string]int{}, map[string]int{}
	var words []int
	seen := map[string]bool{}
	n := 0
	for i := range qs {
		q := &qs[i]
		if q.kind != "dev" {
			continue
		}
		n++
		rk := m.Rank(&q.req, q.pool)
		for i := range q.pool {
			if !seen[q.ids[i]] {
				seen[q.ids[i]] = true
				words = append(words, wordsOf(&q.pool[i]).count())
			}
		}
		kept := answer(m, q, m.MinScore)
		for k, j := range kept {
			sem := 1 + slices.IndexFunc(semanticOrder(q), func(x int) bool { return x == j })
			if rk.feats[j][rTextCover] == 0 {
				semOnly[q.ids[j]]++
			}
			if sem <= 5 {
				semTop5[q.ids[j]]++
			}
			if hubs != nil && goldNear(q, j, hubs.Nearest[world][q.ids[j]]) {
				near[q.ids[j]]++
			}
			in[q.ids[j]] = append(in[q.ids[j]], fmt.Sprintf("%d. %q (sem #%d %.3f, text %.2f, %d)", k+1,
				q.text, sem, q.pool[j].Semantic, rk.feats[j][rTextCover], Percent(rk.Scores[j])))
		}
	}
	ids := make([]string, 0, len(in))
	for id := range in {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool {
		if len(in[ids[a]]) != len(in[ids[b]]) {
			return len(in[ids[a]]) > len(in[ids[b]])
		}
		return ids[a] < ids[b]
	})
	for _, id := range ids[:min(5, len(ids))] {
		w := 0
		for i := range qs {
			if k := slices.Index(qs[i].ids, id); k >= 0 {
				w = wordsOf(&qs[i].pool[k]).count()
				break
			}
		}
		below := 0
		for _, x := range words {
			if x < w {
				below++
			}
		}
		fmt.Printf("hub %s %s: %d of %d answers; %d by the semantic side alone (no request word in its text), %d among the pool's 5 semantically nearest; %d words (percentile %.2f of the pools' documents)\n",
			world, id, len(in[id]), n, semOnly[id], semTop5[id], w, float64(below)/float64(max(len(words), 1)))
		if hubs != nil {
			fmt.Printf("    %d with the gold the hub or one of its 20 nearest documents; %s\n", near[id], percentiles(hubs.Hubness[world], id))
		}
		for _, s := range in[id] {
			fmt.Printf("    %s\n", s)
		}
	}
}

// semanticOrder is q's pool ordered by semantic similarity, best first.
func semanticOrder(q *fitQuery) []int {
	o := make([]int, len(q.pool))
	for i := range o {
		o[i] = i
	}
	sort.SliceStable(o, func(a, b int) bool { return q.pool[o[a]].Semantic > q.pool[o[b]].Semantic })
	return o
}

// goldNear reports whether q's gold is candidate j or among near (j's
// nearest documents).
func goldNear(q *fitQuery, j int, near []string) bool {
	for i, g := range q.gold {
		if g && (i == j || slices.Contains(near, q.ids[i])) {
			return true
		}
	}
	return false
}

// percentiles says where id's hub measures sit among its world's documents.
func percentiles(world map[string]map[string]float64, id string) string {
	var b strings.Builder
	for _, f := range []string{"k10", "centre"} {
		x, below := world[id][f], 0
		for _, v := range world {
			if v[f] < x {
				below++
			}
		}
		fmt.Fprintf(&b, "%s %.3f (percentile %.2f) ", f, x, float64(below)/float64(max(len(world), 1)))
	}
	return b.String()
}

// printConfidenceShift prints how much each confidence feature moves, on
// average over the dev requests, from the set alone (alone) to the set
// with the distractors (with, by request identifier), and what that adds
// to the gate's and the first result's log-odds under m: what makes the
// same first result score higher in a larger index.
func printConfidenceShift(m *Model, alone []fitQuery, with map[string]*fitQuery) {
	var shift [numConf]float64
	n := 0
	for i := range alone {
		a := &alone[i]
		d := with[a.id]
		if a.kind != "dev" || d == nil {
			continue
		}
		ra, rd := m.Rank(&a.req, a.pool), m.Rank(&d.req, d.pool)
		fa := confidenceFeatures(&a.req, ra, a.pool, ra.feats)
		fd := confidenceFeatures(&d.req, rd, d.pool, rd.feats)
		for k := range shift {
			shift[k] += fd[k] - fa[k]
		}
		n++
	}
	var gate, conf float64
	for k := range shift {
		shift[k] /= float64(max(n, 1))
		gate += m.Gate[k] * shift[k]
		conf += m.Conf[k] * shift[k]
		fmt.Printf("confidence feature %-11s moves %+.4f with the distractors: gate log-odds %+.3f, first result's %+.3f\n",
			confNames[k], shift[k], m.Gate[k]*shift[k], m.Conf[k]*shift[k])
	}
	fmt.Printf("confidence with the distractors: gate log-odds %+.3f, first result's %+.3f on average over %d requests\n", gate, conf, n)
}
