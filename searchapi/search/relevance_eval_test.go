package search

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	relset "github.com/agentfinder/agentfinder/fixtures/relevance"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// TestRelevanceDump indexes the relevance set as serve does
// (newRelevanceServer), runs every dev request, every off-catalog
// request and a generated set of training negatives through the ranking
// POST /search uses, and writes what the ranking saw (terms, their document
// frequencies, the fused candidates with their components) plus the
// indexed entries to the JSON file AGENTFINDER_DUMP names. searchapi/score's
// fit reads that file; dumping once lets the model be fitted and
// cross-validated offline without Meilisearch. With
// AGENTFINDER_DUMP_DISTRACTORS=1 the set is indexed with the realworld
// distractors (relset.DistractorCatalogs, as make eval's distractor run).
// AGENTFINDER_DUMP_QVEC names another query vector to write
// (queryvector_eval_test.go).
//
//	AGENTFINDER_DUMP=/tmp/rel.json AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  bash .ci/with-meilisearch.sh go test -count=1 -run TestRelevanceDump ./searchapi/search
func TestRelevanceDump(t *testing.T) {
	out := os.Getenv("AGENTFINDER_DUMP")
	if out == "" {
		t.Skip("set AGENTFINDER_DUMP to a file to write")
	}
	ctx := context.Background()
	var extra []normalize.CatalogResult
	if os.Getenv("AGENTFINDER_DUMP_DISTRACTORS") == "1" {
		var err error
		if extra, err = relset.DistractorCatalogs(filepath.Join("..", "..", "fixtures", "realworld"), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	rs := newRelevanceServer(t, extra...)
	var qs []dumpQuery
	qs = append(qs, readDumpQueries(t, filepath.Join(rs.dir, "dev_queries.jsonl"), "dev")...)
	qs = append(qs, readDumpQueries(t, filepath.Join(rs.dir, "offcatalog.jsonl"), "offcatalog")...)
	qs = append(qs, trainingNegatives(250)...)
	qs = append(qs, terseRequests(rs.results, 100)...)
	// Each request twice: with the query vector (the default) and keyword
	// only (serve --no-embeddings), which has a model of its own.
	for _, mode := range []string{"hybrid", "keyword"} {
		for _, q := range qs {
			sq := &Query{Text: q.Text, PageSize: 10}
			var vec []float32
			if mode == "hybrid" {
				vec = dumpQueryVector(t, rs.eng, q.Text)
			}
			res, err := hybrid.Search(ctx, rs.eng.cfg.Meili, rs.eng.newPlan(ctx, sq, vec))
			if err != nil {
				t.Fatal(err)
			}
			q.Mode = mode
			talk := vec
			if os.Getenv("QVEC_TALK_TYPED") == "1" && vec != nil {
				talk = rs.eng.queryVector(ctx, q.Text) // the confidence's feature as served
			}
			q.SmallTalk = rs.eng.smallTalk(talk)
			q.Terms, q.TermDocs, q.Total = res.Terms, res.TermDocs, res.Total
			q.Hits = res.Hits // the first tier: the pool and what agreement counts places among
			rs.dump.Queries = append(rs.dump.Queries, q)
		}
	}
	b, err := json.Marshal(rs.dump)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d documents, %d requests written to %s", len(rs.dump.Docs), len(rs.dump.Queries), out)
}

// TestRelevanceLatency measures, on the relevance set and in one run, what
// the relevance stage adds to a search: for each dev request, the ranking
// POST /search ran before it (the fused ranking and the first page's
// documents) against localSearch (the same plus the pool's documents, the
// re-ranking and the scores), alternating which goes first, with the query
// vector embedded beforehand for both. make eval runs it
// (AGENTFINDER_EVAL=1) and prints the p50 of each and their ratio, alone
// and with the p50 cost of embedding the request added to both.
func TestRelevanceLatency(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("relevance evaluation: set AGENTFINDER_EVAL=1")
	}
	ctx := context.Background()
	rs := newRelevanceServer(t)
	qs := readDumpQueries(t, filepath.Join(rs.dir, "dev_queries.jsonl"), "dev")
	before := func(q *Query) {
		vec := rs.eng.queryVector(ctx, q.Text)
		res, err := rs.eng.ranked(ctx, rs.eng.newPlan(ctx, q, vec), q.PageSize+1)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 0, q.PageSize)
		for _, h := range res.Hits[:min(q.PageSize, len(res.Hits))] {
			ids = append(ids, h.ID)
		}
		if _, err := hybrid.Fetch(ctx, rs.eng.cfg.Meili, rs.eng.cfg.Index, normalize.FieldIdentifier, ids, searchAttributes, false); err != nil {
			t.Fatal(err)
		}
	}
	now := func(q *Query) {
		if _, err := rs.eng.localSearch(ctx, q, 0); err != nil {
			t.Fatal(err)
		}
	}
	var embed, tBefore, tNow []float64
	for i, dq := range qs {
		q := &Query{Text: dq.Text, PageSize: 10}
		start := time.Now()
		rs.eng.queryVector(ctx, q.Text) // uncached: the embedding's own cost
		embed = append(embed, ms(time.Since(start)))
		runs := []func(*Query){before, now}
		times := []*[]float64{&tBefore, &tNow}
		if i%2 == 1 {
			runs[0], runs[1], times[0], times[1] = runs[1], runs[0], times[1], times[0]
		}
		for k, run := range runs {
			start := time.Now()
			run(q)
			*times[k] = append(*times[k], ms(time.Since(start)))
		}
	}
	pe, pb, pn := p50(embed), p50(tBefore), p50(tNow)
	fmt.Printf("relevance stage latency over %d requests: p50 before %.2f ms, with it %.2f ms (ratio %.3f); "+
		"with the query embedding (p50 %.2f ms): %.2f ms against %.2f ms (ratio %.3f)\n",
		len(qs), pb, pn, pn/pb, pe, pe+pb, pe+pn, (pe+pn)/(pe+pb))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func p50(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// relevanceServer is the relevance set indexed through ingest (real
// settings, real embeddings) and an Engine over it, as serve runs them.
type relevanceServer struct {
	dir     string
	eng     *Engine
	results []normalize.CatalogResult
	dump    relevanceDump
}

func newRelevanceServer(t *testing.T, extra ...normalize.CatalogResult) *relevanceServer {
	t.Helper()
	rs := &relevanceServer{dir: envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance"), dump: relevanceDump{Docs: map[string]dumpDoc{}}}
	m := evalModel(t)
	ctx := context.Background()
	rs.results = append(relevanceCatalogs(t, rs.dir), extra...)
	ms := meilitest.Connect(t)
	name := meilitest.NewIndexName("relevance")
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: name, Embedder: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, uid := range []string{name, name + "_sources"} {
			if task, err := ms.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(ms.Client, task.TaskUID)
			}
		}
	})
	for _, res := range rs.results {
		if err := ix.Put(ctx, res); err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			rs.dump.Docs[r.Identifier] = dumpDoc{Name: r.DisplayName, Description: r.Description, Tags: r.Tags,
				Capabilities: r.Capabilities, RepresentativeQueries: r.RepresentativeQueries, Publisher: r.Publisher,
				Provider: r.Provider, Hosts: endpointHosts(r)}
		}
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// AGENTFINDER_EVAL_RATIO sets the semantic ratio (the served default
	// when unset), for measuring the fusion on these worlds.
	ratio, _ := strconv.ParseFloat(os.Getenv("AGENTFINDER_EVAL_RATIO"), 64)
	rs.eng, err = New(Config{Index: name, Meili: ms.Client, Embedder: m, QueryRewriter: query.Rewrite,
		PublicURL: "https://finder.test.example", PageTokenKey: []byte("k"), SemanticRatio: ratio}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

type relevanceDump struct {
	Docs    map[string]dumpDoc `json:"docs"`
	Queries []dumpQuery        `json:"queries"`
}

type dumpDoc struct {
	Name                  string   `json:"name"`
	Description           string   `json:"description"`
	Tags                  []string `json:"tags,omitempty"`
	Capabilities          []string `json:"capabilities,omitempty"`
	RepresentativeQueries []string `json:"representativeQueries,omitempty"`
	Publisher             string   `json:"publisher,omitempty"`
	// Provider and Hosts say who publishes the record beyond the catalog's
	// domain: the artifact's provider organisation and its endpoints' hosts.
	Provider string   `json:"provider,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
}

// endpointHosts lists the hosts of r's endpoints (its bindings' URLs).
func endpointHosts(r normalize.Record) []string {
	var out []string
	for _, b := range r.Bindings {
		if u, err := url.Parse(b.URL); err == nil && u.Hostname() != "" && !slices.Contains(out, u.Hostname()) {
			out = append(out, u.Hostname())
		}
	}
	return out
}

type dumpQuery struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"` // dev, offcatalog, negative, terse
	Mode     string   `json:"mode"` // hybrid, keyword
	Text     string   `json:"text"`
	Gold     []string `json:"gold,omitempty"`
	Terms    []string `json:"terms"`
	TermDocs []int    `json:"termDocs"`
	Total    int      `json:"total"`
	// SmallTalk is the request's similarity with small talk
	// (score.Request.SmallTalk).
	SmallTalk float64        `json:"smallTalk"`
	Hits      []query.Scored `json:"hits"`
}

func readDumpQueries(t *testing.T, path, kind string) []dumpQuery {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dumpQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		q := dumpQuery{Kind: kind}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		q.Kind = kind
		out = append(out, q)
	}
	return out
}

// trainingNegatives generates n requests no catalog serves (random letter
// strings, keyboard runs, word salads, nonsense sentences, small talk), from a fixed seed and
// vocabularies of their own, so the off-catalog list that make eval scores
// stays unseen by the fit.
func trainingNegatives(n int) []dumpQuery {
	r := rand.New(rand.NewPCG(17, 42))
	letters := "abcdefghijklmnopqrstuvwxyz"
	rows := []string{"qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890"}
	salad := strings.Fields(`apple river quiet seventy chair cloud tomorrow yellow window forgotten
		rubber kitten marble hollow saturday pencil crooked violet engine pillow sugar ladder
		sideways mountain spoon whisper copper lemon ocean eleven velvet thunderous hat basket
		dragonfly carpet sleepy orange broom noodle tuesday giraffe pickle garden fence borrowed
		gentle puzzle zebra candle frozen trumpet button crayon puddle slipper mirror feather`)
	chat := []string{"hello", "hey how's it going", "thank you so much", "ok", "sure why not", "good night",
		"what's up", "cool", "sounds good to me", "sorry, wrong window", "test", "hmm", "are you there?",
		"that's great", "see you later", "oops", "yes please", "wow", "i agree", "who are you"}
	// Small talk that names an everyday thing: a single word an entry may
	// hold must not make it a request.
	frames := []string{"how was your %s", "what is your %s", "i love your %s", "tell me about your %s",
		"my %s was fine", "have a nice %s", "enjoy your %s", "how's the %s going", "lovely %s, isn't it", "i miss my %s"}
	things := strings.Fields(`day week weekend morning evening birthday family name age friend dog cat
		garden holiday sister brother mother father neighbour kitchen chair hobby lunch nap walk`)
	// Word salad shaped as a sentence: articles, verbs and adverbs between
	// the nouns, as nonsense typed by a person reads.
	sentences := []string{"the %a %n %v the %n", "a %n %v %d under the %a %n", "%d the %n %v a %a %n",
		"%n and %n %v %d", "why does the %n %v the %a %n", "my %a %n %v %d beside a %n"}
	slots := map[byte][]string{
		'n': strings.Fields(`walrus bucket horizon accordion biscuit glacier turnip violin lighthouse
			saucer meadow chimney tortoise anchor cabbage scarecrow raincoat walnut compass harbour`),
		'v': strings.Fields(`sings swallows borrows paints forgets chases polishes admires tickles
			juggles unfolds whistles`),
		'a': strings.Fields(`purple anxious wooden salty invisible polite crumbly enormous fluffy
			ancient rusty jealous`),
		'd': strings.Fields(`gently backwards politely suddenly rarely sideways loudly quietly`),
	}
	fill := func(f string) string {
		var b strings.Builder
		for i := 0; i < len(f); i++ {
			if f[i] == '%' && i+1 < len(f) {
				l := slots[f[i+1]]
				b.WriteString(l[r.IntN(len(l))])
				i++
				continue
			}
			b.WriteByte(f[i])
		}
		return b.String()
	}
	word := func(min, max int) string {
		var b strings.Builder
		for range min + r.IntN(max-min+1) {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		return b.String()
	}
	out := make([]dumpQuery, 0, n)
	for i := range n {
		var parts []string
		switch i % 5 {
		case 0:
			for range 1 + r.IntN(4) {
				parts = append(parts, word(3, 10))
			}
		case 1:
			row := rows[r.IntN(len(rows))]
			for range 1 + r.IntN(3) {
				s := r.IntN(len(row) - 3)
				parts = append(parts, row[s:s+3+r.IntN(len(row)-s-3+1)])
			}
		case 2:
			for range 3 + r.IntN(5) {
				parts = append(parts, salad[r.IntN(len(salad))])
			}
		case 3:
			parts = append(parts, fill(sentences[r.IntN(len(sentences))]))
		default:
			if r.IntN(2) == 0 {
				parts = append(parts, chat[r.IntN(len(chat))])
			} else {
				parts = append(parts, fmt.Sprintf(frames[r.IntN(len(frames))], things[r.IntN(len(things))]))
			}
		}
		out = append(out, dumpQuery{ID: fmt.Sprintf("neg-%03d", i), Kind: "negative", Text: strings.Join(parts, " ")})
	}
	return out
}

// terseRequests generates n keyword-style requests (two or three of an
// entry's informative description words, as a searcher who knows what they
// want might type them), each with that entry as its answer: the dev set's
// requests are all full sentences, and the confidence model must not learn
// that a short request is noise.
func terseRequests(results []normalize.CatalogResult, n int) []dumpQuery {
	r := rand.New(rand.NewPCG(17, 43))
	var recs []normalize.Record
	for _, res := range results {
		recs = append(recs, res.Records...)
	}
	out := make([]dumpQuery, 0, n)
	for len(out) < n {
		rec := recs[r.IntN(len(recs))]
		words := query.Analyze(rec.Description).Terms
		if len(words) < 3 {
			continue
		}
		k := 2 + r.IntN(2)
		var pick []string
		for _, i := range r.Perm(len(words))[:k] {
			pick = append(pick, words[i])
		}
		out = append(out, dumpQuery{ID: fmt.Sprintf("terse-%03d", len(out)), Kind: "terse",
			Text: strings.Join(pick, " "), Gold: []string{rec.Identifier}})
	}
	return out
}

// relevanceCatalogs reads the relevance set's catalogs from disk as a crawl
// would hand them over.
func relevanceCatalogs(t *testing.T, dir string) []normalize.CatalogResult {
	t.Helper()
	out, err := relset.Catalogs(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// evalModel loads the sentence-embedding model the eval tests embed with
// (AGENTFINDER_MODEL_DIR, else the repository's .cache/model).
func evalModel(t *testing.T) *embed.Model {
	t.Helper()
	m, err := embed.Load(envOr("AGENTFINDER_MODEL_DIR", "../../.cache/model"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
