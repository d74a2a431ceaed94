package search

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	relset "github.com/agentfinder/agentfinder/fixtures/relevance"
	"github.com/agentfinder/agentfinder/normalize"
)

// entryLayout is one way to build a document's vectors from its record:
// the texts that get a vector, and how a request's similarity to them
// combines (the closest, as Meilisearch matches, or their mean vector).
type entryLayout struct {
	name  string
	texts func(normalize.Record) []string
	mean  bool // one vector: the unit mean of the texts' vectors
}

// TestEntryTextEval measures, on the vector query alone (each request's
// vector against each document's vectors, no Meilisearch), what a
// record's vectors are built from: the entry text as served, parts of it
// left out (tags, skill names, a skill named after the agent, the
// description past 40 words, a registry name's namespace), one vector per
// A2A skill or per sentence (the closest, or their mean), for the set
// alone and with the realworld distractors (AGENTFINDER_EVAL=1;
// docs/MEASUREMENTS.md, eighth round). It prints Recall@1, Recall@10 and
// the top hubs of each layout and world, and with the distractors the
// places each kind of document holds in the first 10s. ENTRY_LAYOUTS
// (names, comma-separated) runs some layouts only; ENTRY_WATCH
// (identifiers) counts the answers that hold each.
//
//	AGENTFINDER_EVAL=1 AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  go test -count=1 -v -run TestEntryTextEval ./searchapi/search
func TestEntryTextEval(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("relevance evaluation: set AGENTFINDER_EVAL=1")
	}
	dir := envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	w := embedWorld(t, dir)
	qs, err := relset.LoadQueries(filepath.Join(dir, "dev_queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	qv := embedAll(t, w.model, func(yield func(string) bool) {
		for _, q := range qs {
			if !yield(q.Text) {
				return
			}
		}
	})
	var recs []normalize.Record
	for _, res := range w.all {
		recs = append(recs, res.Records...)
	}
	checkServedLayout(t, w, recs)
	for _, l := range entryLayouts() {
		if only := os.Getenv("ENTRY_LAYOUTS"); only != "" && !slices.Contains(strings.Split(only, ","), l.name) {
			continue
		}
		vecs := layoutVectors(t, w, recs, l)
		for _, world := range []string{"set alone", "with distractors"} {
			lists := make([][]string, len(qs))
			for qi := range qs {
				lists[qi] = closestTen(qv[qi], vecs, w.ids, func(i int) bool { return world != "set alone" || w.inSet[i] })
			}
			report(world, l.name, qs, lists)
			if world != "set alone" {
				printSlots(lists, strings.Split(os.Getenv("ENTRY_WATCH"), ","))
			}
		}
	}
}

// checkServedLayout fails unless the served layout gives every record
// the entry vector the world was embedded with (so a layout's figures
// compare with the served ones) in the world's order.
func checkServedLayout(t *testing.T, w evalWorld, recs []normalize.Record) {
	t.Helper()
	if len(recs) != len(w.ids) {
		t.Fatalf("%d records, %d documents", len(recs), len(w.ids))
	}
	vecs := layoutVectors(t, w, recs, entryLayouts()[0])
	for i, r := range recs {
		if r.Identifier != w.ids[i] || len(vecs[i]) != 1 || cosine(vecs[i][0], w.docs[i]) < 0.9999 {
			t.Fatalf("record %d (%s): the served layout is not the world's entry vector", i, r.Identifier)
		}
	}
}

// layoutVectors embeds every record's texts under l: a document's
// vectors, one per text, or their unit mean.
func layoutVectors(t *testing.T, w evalWorld, recs []normalize.Record, l entryLayout) [][][]float32 {
	t.Helper()
	var texts []string
	var owner []int
	for i, r := range recs {
		for _, s := range l.texts(r) {
			if s = strings.TrimSpace(s); s != "" {
				texts, owner = append(texts, s), append(owner, i)
			}
		}
	}
	vs, err := w.model.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][][]float32, len(recs))
	for j, v := range vs {
		out[owner[j]] = append(out[owner[j]], v)
	}
	if l.mean {
		for i := range out {
			if len(out[i]) > 0 {
				out[i] = [][]float32{meanVector(out[i])}
			}
		}
	}
	return out
}

// closestTen is the identifiers of the 10 documents nearest to q by
// their closest vector, among those keep admits.
func closestTen(q []float32, vecs [][][]float32, ids []string, keep func(int) bool) []string {
	type cand struct {
		id string
		s  float64
	}
	var cs []cand
	for i, vs := range vecs {
		if !keep(i) || len(vs) == 0 {
			continue
		}
		best := -2.0
		for _, v := range vs {
			best = max(best, cosine(q, v))
		}
		cs = append(cs, cand{ids[i], best})
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(b.s, a.s), strings.Compare(a.id, b.id)) })
	var out []string
	for _, c := range cs[:min(10, len(cs))] {
		out = append(out, c.id)
	}
	return out
}

// cardSkill is one skill of an A2A card, as its data holds it.
type cardSkill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// cardSkills reads the skills of an A2A card's data (none for others).
func cardSkills(r normalize.Record) []cardSkill {
	var c struct {
		Skills []cardSkill `json:"skills"`
	}
	if len(r.Data) == 0 || json.Unmarshal(r.Data, &c) != nil {
		return nil
	}
	return c.Skills
}

func lines(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n")
}

// firstWords is s cut to its first n words.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// shortName is a registry name's last path segment, its separators as
// spaces ("io.github.owner/some-mcp" -> "some mcp").
func shortName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && strings.Contains(s[:i], ".") {
		s = s[i+1:]
	}
	return strings.NewReplacer("-", " ", "_", " ").Replace(s)
}

// entryLayouts are the layouts TestEntryTextEval compares, the served one
// first.
func entryLayouts() []entryLayout {
	one := func(f func(normalize.Record) string) func(normalize.Record) []string {
		return func(r normalize.Record) []string { return []string{f(r)} }
	}
	perSkill := func(r normalize.Record) []string {
		out := []string{lines(r.DisplayName, r.Description)}
		for _, s := range cardSkills(r) {
			out = append(out, lines(r.DisplayName, s.Name+": "+s.Description))
		}
		return out
	}
	return []entryLayout{
		{name: "served", texts: one(normalize.EntryText)},
		{name: "name+desc", texts: one(func(r normalize.Record) string { return lines(r.DisplayName, r.Description) })},
		{name: "no-tags", texts: one(func(r normalize.Record) string {
			return lines(r.DisplayName, r.Description, strings.Join(r.Capabilities, ", "), strings.Join(r.SkillNames, ", "))
		})},
		{name: "no-skillnames", texts: one(func(r normalize.Record) string {
			return lines(r.DisplayName, r.Description, strings.Join(r.Capabilities, ", "), strings.Join(r.Tags, ", "))
		})},
		{name: "tags<=8", texts: one(func(r normalize.Record) string {
			return lines(r.DisplayName, r.Description, strings.Join(r.Capabilities, ", "), strings.Join(r.SkillNames, ", "), strings.Join(r.Tags[:min(8, len(r.Tags))], ", "))
		})},
		{name: "desc<=40w", texts: one(func(r normalize.Record) string {
			return lines(r.DisplayName, firstWords(r.Description, 40), strings.Join(r.Capabilities, ", "), strings.Join(r.SkillNames, ", "), strings.Join(r.Tags, ", "))
		})},
		{name: "shortname", texts: one(func(r normalize.Record) string {
			r.DisplayName = shortName(r.DisplayName)
			return normalize.EntryText(r)
		})},
		{name: "no restating skill", texts: one(func(r normalize.Record) string {
			r.SkillNames = slices.DeleteFunc(slices.Clone(r.SkillNames), func(n string) bool {
				return strings.Contains(strings.ToLower(n), strings.ToLower(r.DisplayName))
			})
			return normalize.EntryText(r)
		})},
		{name: "per-skill max", texts: perSkill},
		{name: "per-skill mean", texts: perSkill, mean: true},
		{name: "sentences mean", texts: sentenceTexts, mean: true},
		{name: "sentences max", texts: sentenceTexts},
		{name: "entry+sentences mean", texts: func(r normalize.Record) []string {
			return append([]string{normalize.EntryText(r)}, sentenceTexts(r)...)
		}, mean: true},
		{name: "entry+skills mean", texts: func(r normalize.Record) []string {
			return append([]string{normalize.EntryText(r)}, perSkill(r)[1:]...)
		}, mean: true},
	}
}

// printSlots prints how many of the answers' places each kind of
// document holds (the set's, the registry servers', the A2A cards') and
// by how many documents, and how many answers hold each watched
// identifier.
func printSlots(lists [][]string, watched []string) {
	kinds := []string{"set", relset.DistractorMCPHost, relset.DistractorA2AHost}
	places, docs := map[string]int{}, map[string]map[string]bool{}
	for _, l := range lists {
		for _, id := range l {
			k := kinds[0]
			for _, host := range kinds[1:] {
				if strings.Contains(id, ":"+host+":") {
					k = host
				}
			}
			places[k]++
			if docs[k] == nil {
				docs[k] = map[string]bool{}
			}
			docs[k][id] = true
		}
	}
	fmt.Print("    places")
	for _, k := range kinds {
		fmt.Printf("  %s %d (%d documents)", k, places[k], len(docs[k]))
	}
	fmt.Println()
	for _, id := range watched {
		if id == "" {
			continue
		}
		n := 0
		for _, l := range lists {
			if slices.Contains(l, id) {
				n++
			}
		}
		fmt.Printf("    %s in %d answers\n", id, n)
	}
}

// sentenceTexts is the name with each sentence of the description, then
// the capabilities, skill names and tags, each its own text.
func sentenceTexts(r normalize.Record) []string {
	out := []string{r.DisplayName}
	for _, s := range strings.SplitAfter(r.Description, ". ") {
		out = append(out, r.DisplayName+": "+s)
	}
	return append(out, strings.Join(r.Capabilities, ", "), strings.Join(r.SkillNames, ", "), strings.Join(r.Tags, ", "))
}
