package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/agentfinder/agentfinder/normalize"
)

// Embedder turns texts into vectors of Dimensions() floats, one per text, in
// order. Implementations must be safe for concurrent use; ingest calls Embed
// from up to GOMAXPROCS goroutines at once.
type Embedder interface {
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// VectorTexts returns the texts embedded for rec, in the order
// normalize.EmbedderName's vectors are stored: the entry text, then the
// embedded representative queries and the tools read from its endpoint.
// Empty texts are skipped. Benchmarks embed the same texts for their floor.
func VectorTexts(rec normalize.Record) []string {
	var out []string
	if t := normalize.EntryText(rec); t != "" {
		out = append(out, t)
	}
	out = append(out, normalize.EmbeddedQueries(rec.RepresentativeQueries)...)
	return append(out, normalize.EmbeddedTools(rec.Tools)...)
}

// vectorCache remembers vectors by content hash so content already embedded
// is not embedded again when its document is rewritten whole (a record taken
// over by another catalog with the same content, a write retried after a
// failure). Unchanged records are never rewritten at all, and stale flags are
// partial updates that keep the vectors, so the cache stays small: 4096
// entries, cleared when full (at 512 dimensions and a few vectors per record,
// tens of MB at most).
type vectorCache struct {
	mu  sync.Mutex
	max int
	m   map[string][][]float32
}

func (c *vectorCache) get(hash string) ([][]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[hash]
	return v, ok
}

func (c *vectorCache) put(hash string, v [][]float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string][][]float32)
	}
	c.m[hash] = v
}

// embedDocs sets Vectors on every doc: {EmbedderName: [[...], ...]} or
// {EmbedderName: nil} for a record without text. It embeds in chunks across
// GOMAXPROCS goroutines and reuses cached vectors by content hash.
func embedDocs(ctx context.Context, e Embedder, cache *vectorCache, docs []*normalize.Document) error {
	type job struct {
		doc   *normalize.Document
		texts []string
	}
	var jobs []job
	for _, d := range docs {
		if v, ok := cache.get(vectorKey(d)); ok && d.ContentHash != "" {
			setVectors(d, v)
			continue
		}
		texts := VectorTexts(d.Record)
		if len(texts) == 0 {
			d.Vectors = map[string]any{normalize.EmbedderName: nil}
			continue
		}
		jobs = append(jobs, job{doc: d, texts: texts})
	}
	if len(jobs) == 0 {
		return nil
	}
	// Chunks of about 64 texts keep each Embed call busy without starving the
	// other goroutine.
	const chunkTexts = 64
	var chunks [][]job
	var cur []job
	n := 0
	for _, j := range jobs {
		cur = append(cur, j)
		n += len(j.texts)
		if n >= chunkTexts {
			chunks = append(chunks, cur)
			cur, n = nil, 0
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	dims := e.Dimensions()
	for _, chunk := range chunks {
		g.Go(func() error {
			var texts []string
			for _, j := range chunk {
				texts = append(texts, j.texts...)
			}
			vecs, err := e.Embed(gctx, texts)
			if err != nil {
				return fmt.Errorf("embed %d texts: %w", len(texts), err)
			}
			if len(vecs) != len(texts) {
				return fmt.Errorf("embed %d texts: got %d vectors", len(texts), len(vecs))
			}
			i := 0
			for _, j := range chunk {
				v := vecs[i : i+len(j.texts)]
				i += len(j.texts)
				setVectors(j.doc, v)
				// A vector of the wrong size is left for Meilisearch to reject:
				// that costs only this document, with Meilisearch's error, and
				// it is not cached.
				if j.doc.ContentHash != "" && sameDims(v, dims) {
					cache.put(vectorKey(j.doc), v)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// vectorKey is the cache key of d's vectors: its content hash, and its
// tools' texts, which the content hash does not cover.
func vectorKey(d *normalize.Document) string {
	tools := normalize.EmbeddedTools(d.Tools)
	if len(tools) == 0 {
		return d.ContentHash
	}
	b, _ := json.Marshal(tools) // strings always marshal
	return d.ContentHash + "\x00" + normalize.ContentHash(b)
}

func setVectors(d *normalize.Document, v [][]float32) {
	if len(v) == 0 {
		d.Vectors = map[string]any{normalize.EmbedderName: nil}
		return
	}
	d.Vectors = map[string]any{normalize.EmbedderName: v}
}

func sameDims(v [][]float32, dims int) bool {
	for _, x := range v {
		if len(x) != dims {
			return false
		}
	}
	return true
}
