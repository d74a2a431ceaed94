// Package ingest owns the Meilisearch index of Agent Finder: its settings,
// every write to it, and the rules that decide which record stands when
// catalogs disagree. The crawler hands it one CatalogResult per fetched
// catalog through Put (an MCP registry walk hands on a page of one-server
// results at once through PutAll); ingest applies the sync rules, batches
// the writes across catalogs, awaits each Meilisearch task, and retries
// while Meilisearch is unreachable, slowing the crawler down instead of
// dropping anything.
//
// Who owns which record is kept in the index itself: every document carries
// sourceCatalog and lostClaims (the other catalogs' claims on its identifier
// that lost under the precedence order in precedence.go), and ingest loads
// (id, sourceCatalog, contentHash, precedence fields, lostClaims) for all
// documents at start, then keeps that table in memory as the
// only writer. A second, small index "<index>_sources" keeps each catalog's
// fetch health (last status, consecutive failures, last ok time), which is
// not derivable from the documents and drives stale marking across restarts.
// Keeping ownership in the documents means it can never disagree with what
// is actually indexed.
//
// Readers serve only fresh, unexpired records by filtering on
// `stale = false AND (expiresAtTs = 0 OR expiresAtTs > <now, Unix seconds>)`:
// ingest keeps stale records whole (flagged, never deleted by a failure) and
// expired ones flagged by expiresAtTs, so they come back without a rewrite.
//
// ingest imports normalize, meilisearch-go (its calls live in store.go
// and settings.go) and the Prometheus client (metrics.go); it must not
// import crawler, searchapi or cmd.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/meilisearch/meilisearch-go"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/agentfinder/agentfinder/normalize"
)

// ErrClosed is returned by Put and Flush after Close was called.
var ErrClosed = errors.New("ingest: indexer closed")

// Config configures an Indexer. The zero value is usable.
type Config struct {
	// Index is the Meilisearch index name; default "agents". Per-catalog
	// state lives in Index+"_sources".
	Index string
	// Logger receives lifecycle and failure logs; nil discards.
	Logger *slog.Logger
	// Embedder, when set, makes every document carry user-provided vectors
	// for normalize.EmbedderName. Nil: no embedder setting, no vectors.
	Embedder Embedder
	// QueueSize bounds the entries waiting to be applied (a Put's result,
	// or the results of one PutAll); Put and PutAll block when it is full.
	// Default 256.
	QueueSize int
	// BatchSize is the number of queued document changes that triggers a
	// write; one write goes out as tasks of at most 5000 documents, enqueued
	// together. Default 20000, or embeddedBatchDocs (2500) with an Embedder: a batch's documents
	// are held with their vectors, and encoded, until it is written (a
	// 30,000-server registry walk peaked at 685 MB with 5000, 580 MB with
	// 2500, and was no slower), and 2500 of them already take the embedder
	// long enough that a larger batch would save Meilisearch little.
	BatchSize int
	// FlushInterval is how long a batch waits for more results before it is
	// written, when results are arriving back to back; a result that finds
	// the queue empty is written at once. Default 10ms: short, because while
	// one batch is being written the next one fills up anyway.
	FlushInterval time.Duration
	// StaleAfterFailures marks a catalog's records stale after this many
	// consecutive failed fetches. Default 3; negative disables.
	StaleAfterFailures int
	// StaleAfter marks a catalog's records stale when its last successful
	// fetch is older than this. Default 7 days; negative disables.
	StaleAfter time.Duration
	// StaleCheckInterval is how often the age rule is checked while idle.
	// Default 1 minute.
	StaleCheckInterval time.Duration
	// OnResult, when set, is called from the indexer's goroutine once per
	// CatalogResult after its writes finished (or failed). It must not block
	// for long and must not call Put or Flush.
	OnResult func(catalog string, applied ApplyResult)
	// Health, when set, says each record's last probed health: ingest
	// stamps it on every document it writes, so a recrawl never resets a
	// known health. Records it does not know carry {status: unknown}.
	Health HealthSource
	// Tools, when set, says the tools the prober read from each record's
	// endpoint: ingest stamps them on every document it writes, in place
	// of the tools the record's server card declares.
	Tools ToolSource
	// Now is the clock; default time.Now.
	Now func() time.Time
	// RetryMin and RetryMax bound the backoff while Meilisearch is
	// unreachable. Defaults 50ms and 5s.
	RetryMin, RetryMax time.Duration
	// SetupTimeout bounds how long New waits for an unreachable Meilisearch
	// before it gives up with the last error. Default 1 minute. Writes
	// after New retry without limit.
	SetupTimeout time.Duration
	// Metrics, when set, receives a collector that reads Stats at scrape
	// time (agentfinder_ingest_*); nil exposes nothing. New fails if the
	// names are taken in it.
	Metrics prometheus.Registerer
}

func (c *Config) defaults() {
	if c.Index == "" {
		c.Index = "agents"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 256
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 20000
		if c.Embedder != nil {
			c.BatchSize = embeddedBatchDocs
		}
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 10 * time.Millisecond
	}
	if c.StaleAfterFailures == 0 {
		c.StaleAfterFailures = 3
	}
	if c.StaleAfter == 0 {
		c.StaleAfter = 7 * 24 * time.Hour
	}
	if c.StaleCheckInterval <= 0 {
		c.StaleCheckInterval = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.RetryMin <= 0 {
		c.RetryMin = 50 * time.Millisecond
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 5 * time.Second
	}
	if c.SetupTimeout <= 0 {
		c.SetupTimeout = time.Minute
	}
}

// ApplyResult is what applying one CatalogResult did to the index.
type ApplyResult struct {
	Catalog   string
	Status    normalize.FetchStatus
	Upserted  int // records written (new or changed)
	Unchanged int // records whose content hash had not changed
	Deleted   int // records this catalog no longer lists, deleted
	Conflicts []Conflict
	// Kept lists the identifiers the catalog still lists but whose entries
	// are invalid now: their last good records were kept, not deleted.
	Kept        []string
	MarkedStale int // records marked stale by this result
	Recovered   int // stale records made fresh again
	// Problems holds one CodeConflict problem per losing write and one
	// CodeKeptLastGood problem per entry in Kept.
	Problems []normalize.Problem
	// Refetch lists, sorted, the catalogs whose claims lost to a record this
	// result deleted. Ingest keeps no copy of their records, and a 304
	// carries none, so once the write is done it stops holding them (Holds
	// is false): the crawler then fetches them in full, and the best claim
	// left takes the record.
	Refetch []string
	// Err is set when writing this result's changes failed for good (a
	// Meilisearch task failed, or the indexer was closed before the write).
	Err error
}

// Conflict is a write that lost against the record already held for the
// same identifier.
type Conflict struct {
	Identifier string
	Kept       string // catalog whose record stands
	Lost       string // catalog whose write lost
	Reason     string // the precedence rule that decided: "stale", "signed by the publisher", "verified publisher", "seq", "updatedAt", "catalog URL", "content hash"
}

// Stats are running totals since New.
type Stats struct {
	Results      int64  `json:"results"` // CatalogResults applied
	Upserted     int64  `json:"upserted"`
	Unchanged    int64  `json:"unchanged"`
	Deleted      int64  `json:"deleted"`
	Conflicts    int64  `json:"conflicts"`
	MarkedStale  int64  `json:"markedStale"`
	Recovered    int64  `json:"recovered"`
	Batches      int64  `json:"batches"`      // commits
	Tasks        int64  `json:"tasks"`        // Meilisearch write tasks awaited
	TaskFailures int64  `json:"taskFailures"` // writes that failed for good
	Documents    int    `json:"documents"`    // documents ingest believes the index holds
	Catalogs     int    `json:"catalogs"`     // catalogs with state
	Queued       int    `json:"queued"`       // results waiting in the queue
	LastError    string `json:"lastError,omitempty"`
}

// Indexer applies CatalogResults to a Meilisearch index. It satisfies the
// crawler's Sink. Create it with New and stop it with Close; it owns one
// goroutine that does all writes.
type Indexer struct {
	cfg     Config
	st      *store
	index   string
	sources string
	tools   string // the tools index (toolsindex.go)
	vcache  *vectorCache
	// optOut names the userProvided embedders another writer configured
	// on the index, which this one, having no Embedder, leaves alone: its
	// documents carry null vectors for them (see applySettings).
	optOut []string

	queue   chan item
	grouped *semaphore.Weighted // results queued by PutAll (see maxGrouped)
	mu      sync.RWMutex        // held for reading by senders; Close takes it to seal the queue
	closed  bool
	closing chan struct{} // closed by Close: senders stop
	sealed  chan struct{} // closed once no sender can still send
	done    chan struct{} // closed when the worker exited
	cancel  context.CancelFunc
	once    sync.Once
	runErr  error

	held heldSet // catalogs durably written; read by Holds from any goroutine

	// Worker-owned state.
	docs      map[string]*docMeta
	keys      map[string]string // match key or "id <doc id>" of any claim -> the document it is on (see resolve)
	srcs      map[string]*source
	seeds     map[string]time.Time        // seed -> start of its latest crawl that read a catalog
	pending   map[string]time.Time        // seed -> start of a crawl that has read none yet
	unstamped map[string]claimKey         // id -> documents loaded without health (until setup stamps them)
	unaliased map[string][]string         // id -> alias keys of documents loaded without them (until setup stamps them)
	healths   map[string]normalize.Health // id -> the stored health, kept only without Config.Health
	toolful   map[string]string           // id -> ToolsKey of the documents load read with tools, or legacyTools (until setup syncs the tools index)
	toolDocs  map[string]bool             // ids the tools index holds a document for
	// toolsPending are ids whose tool documents a failed write may have
	// left out of step with their records: repaired before the next
	// commit (syncTools).
	toolsPending map[string]bool
	// toolsUnwritten are the tool lists a failed tools index write did not
	// store (nil: the record lists none), by id: the tools index is their
	// one home, so the repair writes them from here.
	toolsUnwritten map[string]unwrittenTools

	statsMu sync.Mutex
	stats   Stats
}

type item struct {
	res    []*normalize.CatalogResult // applied in order
	weight int64                      // of grouped, held from PutAll until the worker takes it
	flush  chan error
	health *healthUpdate
	start  *crawlStart
	tools  *toolsUpdate
	// urgent results (normalize.CatalogResult.Urgent) are written at
	// once: the batch that takes one is committed without waiting for more
	// results or for FlushInterval, even while other results arrive back
	// to back. Someone is waiting to see these records (a publisher who
	// pinged), so latency beats batching for them.
	urgent bool
}

// New connects to Meilisearch through client, creates the index and its
// sources index when missing, applies the settings (only when they differ),
// loads who owns which document, and starts the writer goroutine. It
// retries while Meilisearch is unreachable, until ctx ends or SetupTimeout.
func New(ctx context.Context, client meilisearch.ServiceManager, cfg Config) (*Indexer, error) {
	cfg.defaults()
	ix := &Indexer{
		cfg: cfg,
		st: &store{client: client, logger: cfg.Logger.With("component", "ingest"),
			retryMin: cfg.RetryMin, retryMax: cfg.RetryMax, poll: 3 * time.Millisecond},
		index:     cfg.Index,
		sources:   cfg.Index + "_sources",
		tools:     normalize.ToolsIndex(cfg.Index),
		vcache:    &vectorCache{max: 4096},
		queue:     make(chan item, cfg.QueueSize),
		grouped:   semaphore.NewWeighted(int64(maxGrouped(cfg))),
		closing:   make(chan struct{}),
		sealed:    make(chan struct{}),
		done:      make(chan struct{}),
		docs:      make(map[string]*docMeta),
		keys:      make(map[string]string),
		srcs:      make(map[string]*source),
		seeds:     make(map[string]time.Time),
		pending:   make(map[string]time.Time),
		unstamped: make(map[string]claimKey),
		unaliased: make(map[string][]string),
		healths:   make(map[string]normalize.Health),
		toolful:   make(map[string]string),
		toolDocs:  make(map[string]bool),

		toolsPending:   make(map[string]bool),
		toolsUnwritten: make(map[string]unwrittenTools),
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.SetupTimeout)
	defer cancel()
	if err := ix.setup(sctx); err != nil {
		return nil, fmt.Errorf("ingest: set up index %s: %w", cfg.Index, err)
	}
	if err := ix.registerMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ix.cancel = cancel
	go ix.run(runCtx)
	return ix, nil
}

func (ix *Indexer) setup(ctx context.Context) error {
	for _, uid := range []string{ix.index, ix.sources} {
		if err := ix.st.ensureIndex(ctx, uid); err != nil {
			return err
		}
	}
	dims := 0
	if ix.cfg.Embedder != nil {
		dims = ix.cfg.Embedder.Dimensions()
	}
	if err := ix.load(ctx); err != nil {
		return err
	}
	ix.loadHeld()
	store := ""
	if dims > 0 {
		store = vectorStore
	}
	applied, err := ix.st.applySettings(ctx, ix.index, desiredSettings(dims), store, ix.optOutVectors)
	if err != nil {
		return err
	}
	if applied.changed {
		ix.st.logger.Info("index settings applied", "index", ix.index)
	}
	if applied.storeTask != 0 {
		ix.st.logger.Info("vector store change enqueued", "index", ix.index, "store", vectorStore, "task", applied.storeTask)
	}
	if ix.optOut = applied.kept; len(ix.optOut) > 0 {
		ix.st.logger.Warn("the index has embedders and this process no embedding model: the documents it writes have no vectors until a process with the model rewrites them",
			"index", ix.index, "embedders", ix.optOut)
	}
	stamped := slices.Concat(slices.Collect(maps.Keys(ix.unstamped)), slices.Collect(maps.Keys(ix.unaliased)))
	if err := ix.stampUnstamped(ctx); err != nil {
		return err
	}
	if err := ix.stampAliases(ctx); err != nil {
		return err
	}
	if err := ix.setupTools(ctx, ix.toolful, stamped); err != nil {
		return err
	}
	ix.toolful = nil
	if applied.embeddersChanged {
		// Documents written before this embedder setting have no (or
		// differently sized) vectors: forget their content hashes so each
		// catalog's next fetch rewrites them with vectors.
		for _, m := range ix.docs {
			m.hash = ""
		}
	}
	ix.addStats(func(*Stats) {})
	ix.st.logger.Info("ingest ready", "index", ix.index, "documents", len(ix.docs), "catalogs", len(ix.srcs))
	return nil
}

// optOutVectors gives every indexed document null vectors for the embedder,
// which Meilisearch requires before it accepts a new userProvided embedder.
// The documents are embedded for real when their catalogs are next fetched.
func (ix *Indexer) optOutVectors(ctx context.Context) error {
	ids := make([]string, 0, len(ix.docs))
	for id := range ix.docs {
		ids = append(ids, id)
	}
	for start := 0; start < len(ids); start += chunkDocs {
		part := ids[start:min(start+chunkDocs, len(ids))]
		patch := make([]map[string]any, len(part))
		for i, id := range part {
			patch[i] = map[string]any{normalize.FieldID: id, "_vectors": map[string]any{normalize.EmbedderName: nil}}
		}
		if err := ix.st.write(ctx, "opt documents out of vectors", ix.st.patchTask(ix.index, patch).send); err != nil {
			return err
		}
	}
	return nil
}

// optOutDocs gives docs null vectors for the embedders this writer leaves
// alone (Indexer.optOut) and marks them unembedded, for a writer with the
// model to rewrite. Without such embedders it changes nothing.
func (ix *Indexer) optOutDocs(docs []*normalize.Document) {
	if len(ix.optOut) == 0 {
		return
	}
	for _, d := range docs {
		d.Vectors = make(map[string]any, len(ix.optOut))
		for _, name := range ix.optOut {
			d.Vectors[name] = nil
		}
		d.Unembedded = true
	}
}

// Put queues res to be applied. It blocks while the queue is full (the
// indexer is behind, or Meilisearch is down) and returns an error only when
// ctx ends or the indexer is closed; once Put returned nil the result will
// be applied. The indexer keeps res; the caller must not modify it after.
func (ix *Indexer) Put(ctx context.Context, res normalize.CatalogResult) error {
	return ix.send(ctx, item{res: []*normalize.CatalogResult{&res}, urgent: res.Urgent})
}

// PutAll queues results to be applied one after another, each exactly as
// Put would apply it, as one entry of the queue. A producer of many small
// results (an MCP registry walk hands on one per server) thus fills the
// writer's batches as a catalog of as many records would: while one batch
// is written, the queue holds up to QueueSize such groups instead of
// QueueSize single records, and the next batch takes them all, so a walk
// is written (and embedded) in a few large batches, not in hundreds of
// small ones, each a Meilisearch task whose cost grows with the index.
// Like Put, it blocks while the queue is full, and also while the results
// PutAll queued would be more than a batch (maxGrouped); the indexer keeps
// results.
func (ix *Indexer) PutAll(ctx context.Context, results []normalize.CatalogResult) error {
	if len(results) == 0 {
		return nil
	}
	rs := make([]*normalize.CatalogResult, len(results))
	urgent := false
	for i := range results {
		rs[i] = &results[i]
		urgent = urgent || results[i].Urgent
	}
	w := min(int64(len(rs)), int64(maxGrouped(ix.cfg)))
	if err := ix.grouped.Acquire(ctx, w); err != nil {
		return err
	}
	if err := ix.send(ctx, item{res: rs, weight: w, urgent: urgent}); err != nil {
		ix.grouped.Release(w)
		return err
	}
	return nil
}

// maxGrouped bounds the results PutAll keeps queued: one batch's worth,
// so the next batch is ready while one is written, and a producer that
// outruns the writer (a registry walk does) holds no more than that in
// memory beside the batch being written.
func maxGrouped(cfg Config) int { return cfg.BatchSize }

func (ix *Indexer) send(ctx context.Context, it item) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return ErrClosed
	}
	select {
	case ix.queue <- it:
		return nil
	case <-ix.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Flush waits until every result Put before it was written and is
// searchable. It returns the error of the batch it completed, if any
// result in it could not be written.
func (ix *Indexer) Flush(ctx context.Context) error {
	ch := make(chan error, 1)
	if err := ix.send(ctx, item{flush: ch}); err != nil {
		return err
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting results, writes everything already queued, and
// waits for the writer to finish. When ctx ends first, pending writes are
// abandoned (their OnResult reports the error) and ctx's error is returned.
func (ix *Indexer) Close(ctx context.Context) error {
	ix.once.Do(func() {
		close(ix.closing)
		ix.mu.Lock()
		ix.closed = true
		ix.mu.Unlock()
		close(ix.sealed)
	})
	select {
	case <-ix.done:
		return ix.runErr
	case <-ctx.Done():
		ix.cancel()
		<-ix.done
		return ctx.Err()
	}
}

// Stats returns running totals.
func (ix *Indexer) Stats() Stats {
	ix.statsMu.Lock()
	defer ix.statsMu.Unlock()
	s := ix.stats
	s.Queued = len(ix.queue)
	return s
}

// run is the writer goroutine: it groups queued results into batches (by
// size and by time) and commits them one after another.
func (ix *Indexer) run(ctx context.Context) {
	defer close(ix.done)
	defer ix.cancel()
	tick := time.NewTicker(ix.cfg.StaleCheckInterval)
	defer tick.Stop()
	for {
		b := ix.newBatch()
		select {
		case it := <-ix.queue:
			ix.add(ctx, b, it)
		case <-tick.C:
			ix.checkAge(b)
			if !b.empty() {
				ix.commit(ctx, b)
			}
			continue
		case <-ix.closing:
			<-ix.sealed
			ix.drain(ctx, b)
			return
		}
		// Take what is already queued. If nothing was, the crawler is idle:
		// write at once, for freshness. Otherwise results are arriving:
		// linger up to FlushInterval to write them together.
		busy := false
	take:
		for b.docs < ix.cfg.BatchSize && !b.forced {
			select {
			case it := <-ix.queue:
				ix.add(ctx, b, it)
				busy = true
			default:
				break take
			}
		}
		linger := time.NewTimer(ix.cfg.FlushInterval)
	fill:
		for busy && b.docs < ix.cfg.BatchSize && !b.forced {
			select {
			case it := <-ix.queue:
				ix.add(ctx, b, it)
			case <-linger.C:
				break fill
			case <-ix.closing:
				break fill
			}
		}
		linger.Stop()
		ix.checkAge(b)
		ix.commit(ctx, b)
	}
}

// drain commits everything left in the sealed queue.
func (ix *Indexer) drain(ctx context.Context, b *batch) {
	for {
		select {
		case it := <-ix.queue:
			ix.add(ctx, b, it)
			if b.docs >= ix.cfg.BatchSize {
				ix.commit(ctx, b)
				b = ix.newBatch()
			}
		default:
			if !b.empty() {
				ix.commit(ctx, b)
			}
			if ctx.Err() != nil {
				ix.runErr = ctx.Err()
			}
			return
		}
	}
}

func (ix *Indexer) addStats(f func(s *Stats)) {
	ix.statsMu.Lock()
	defer ix.statsMu.Unlock()
	f(&ix.stats)
	ix.stats.Documents = len(ix.docs)
	ix.stats.Catalogs = len(ix.srcs)
}
