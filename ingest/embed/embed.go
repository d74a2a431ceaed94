package embed

import (
	"container/list"
	"context"
	"crypto/sha256"
	"runtime"
	"sync"
)

// DefaultCacheSize is how many vectors a Model keeps by default (2 KiB each).
const DefaultCacheSize = 16384

// Model embeds text with USE-lite. It is safe for concurrent use.
type Model struct {
	w     *weights
	cache *lru
}

// Load reads the model from dir (model.json, group1-shard1of7..7of7,
// vocab.json). When a file is absent the error wraps ErrModelMissing.
func Load(dir string) (*Model, error) {
	w, err := loadWeights(dir)
	if err != nil {
		return nil, err
	}
	return &Model{w: w, cache: newLRU(DefaultCacheSize)}, nil
}

// SetCacheSize bounds the vector cache to n entries (0 disables it). Call it
// before the model is shared.
func (m *Model) SetCacheSize(n int) { m.cache = newLRU(n) }

// Dimensions reports the vector length, 512.
func (m *Model) Dimensions() int { return Dimensions }

// Tokens returns the token ids the model reads for text (after clipping to
// 128), for tests and diagnostics.
func (m *Model) Tokens(text string) []int32 {
	ids := m.w.tokenize.encode(text)
	if len(ids) > maxTokens {
		ids = ids[:maxTokens]
	}
	return ids
}

// EmbedOne embeds one text on the calling goroutine, using the cache.
func (m *Model) EmbedOne(text string) []float32 {
	key := sha256.Sum256([]byte(text))
	if v, ok := m.cache.get(key); ok {
		return clone(v)
	}
	v := m.w.forward(m.w.tokenize.encode(text))
	m.cache.put(key, v)
	return clone(v)
}

// Embed returns one unit-length vector per text, in order. Texts not in the
// cache are embedded by a pool of GOMAXPROCS workers; it stops early and
// returns ctx.Err() when ctx is cancelled.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	first := map[[32]byte]int{} // first index of each distinct uncached text
	var todo []int
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := m.cache.get(keys[i]); ok {
			out[i] = clone(v)
			continue
		}
		if _, dup := first[keys[i]]; !dup {
			first[keys[i]] = i
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		workers := min(runtime.GOMAXPROCS(0), len(todo))
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					v := m.w.forward(m.w.tokenize.encode(texts[i]))
					m.cache.put(keys[i], v)
					out[i] = v
				}
			}()
		}
	feed:
		for _, i := range todo {
			select {
			case jobs <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(jobs)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for i := range texts {
		if out[i] == nil {
			out[i] = clone(out[first[keys[i]]])
		} else if j, ok := first[keys[i]]; ok && j == i {
			out[i] = clone(out[i]) // the cache holds the original
		}
	}
	return out, nil
}

func clone(v []float32) []float32 { return append([]float32(nil), v...) }

// lru is a size-bounded, least-recently-used vector cache keyed by the
// SHA-256 of the text.
type lru struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent; values are *lruEntry
	items map[[32]byte]*list.Element
}

type lruEntry struct {
	key [32]byte
	vec []float32
}

func newLRU(n int) *lru {
	return &lru{max: n, order: list.New(), items: map[[32]byte]*list.Element{}}
}

func (c *lru) get(k [32]byte) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).vec, true
}

func (c *lru) put(k [32]byte, v []float32) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry{key: k, vec: v})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}
