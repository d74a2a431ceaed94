package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
)

// publicURL is the page the crawler's User-Agent points site owners to.
const publicURL = "https://github.com/agentfinder/agentfinder"

// runCrawl implements 'agentfinder crawl': crawl the seeds once, write what
// was found to the index (or only report it with --no-index), print a
// summary or the JSON report.
func runCrawl(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return crawlMain(ctx, args, nil, stdout, stderr)
}

func crawlMain(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	c := newCLI("crawl", "[flags] [SEED...]\n\nCrawls the seeds once: discovers their catalogs (well-known URIs, robots.txt Agentmap,\n<link rel=\"ai-catalog\">, DNS SVCB), fetches and follows them, and writes the records to the index.")
	var f crawlFlags
	f.register(c)
	var ixOpts indexOptions
	ixOpts.register(c)
	noIndex := c.fs.Bool("no-index", false, "do not write to the index; only report")
	asJSON := c.fs.Bool("json", false, "print the crawl report as JSON")
	logLevel := c.fs.String("log-level", "warn", "log `level`: debug, info, warn, error")
	logFormat := c.fs.String("log-format", "text", "log `format`: text or json")
	if code := c.parseOrExit(args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	f.seeds = append(f.seeds, c.args...)
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "agentfinder crawl: "+format+"\n", a...)
		return 2
	}
	logger, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return usageErr("%v", err)
	}
	seeds, err := f.seedList()
	if err != nil {
		return usageErr("%v", err)
	}
	if len(seeds) == 0 {
		return usageErr("no seeds: give --seed DOMAIN_OR_URL or --seeds FILE")
	}
	cfg, err := f.crawlerConfig()
	if err != nil {
		return usageErr("%v", err)
	}

	var sink crawlSink = discardSink{}
	if !*noIndex {
		s, err := openIndexSink(ctx, ixOpts, logger)
		if err != nil {
			fmt.Fprintf(stderr, "agentfinder crawl: %v\n", err)
			return 1
		}
		sink = s
	}
	prog := newCrawlProgress(stderr, len(seeds))
	cr, err := crawler.New(cfg, &progressSink{next: sink, prog: prog}, logger)
	if err != nil {
		_ = sink.Close(ctx)
		return usageErr("%v", err)
	}
	rep, err := crawlAndClose(ctx, cr, sink, prog, seeds)
	if werr := writeCrawlReport(stdout, rep, *asJSON); werr != nil {
		fmt.Fprintf(stderr, "agentfinder crawl: write report: %v\n", werr)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder crawl: %v\n", err)
		return 1
	}
	if err := crawlOutcome(rep); err != nil {
		fmt.Fprintf(stderr, "agentfinder crawl: %v\n", err)
		return 1
	}
	return 0
}

// crawlAndClose crawls seeds, then closes the crawler and the sink, which
// flushes what it holds even after an interrupt (within a minute).
func crawlAndClose(ctx context.Context, cr *crawler.Crawler, sink crawlSink, prog *crawlProgress, seeds []string) (*crawler.Report, error) {
	rep, crawlErr := cr.Crawl(ctx, seeds)
	_ = cr.Close()
	prog.finish()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return rep, errors.Join(crawlErr, sink.Close(closeCtx))
}

// writeCrawlReport prints rep (nil: nothing) as indented JSON or as the
// summary.
func writeCrawlReport(w io.Writer, rep *crawler.Report, asJSON bool) error {
	if rep == nil {
		return nil
	}
	if !asJSON {
		printCrawlSummary(w, rep)
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// crawlOutcome fails a crawl in which no catalog could be read: every
// catalog failed, or none was found at all.
func crawlOutcome(rep *crawler.Report) error {
	if rep == nil {
		return nil
	}
	t := rep.Totals
	switch {
	case t.OK+t.NotModified > 0:
		return nil
	case t.Failed > 0:
		return fmt.Errorf("every catalog failed (%d of %d): nothing was read", t.Failed, t.Catalogs)
	default:
		return fmt.Errorf("no catalog found for %d %s", t.Seeds, plural(t.Seeds, "seed", "seeds"))
	}
}

// crawlerUserAgent is the crawler's User-Agent for this build.
func crawlerUserAgent() string {
	return fmt.Sprintf("AgentFinderBot/%s (+%s)", version, publicURL)
}

// crawlerConfig turns the shared crawl flags into a crawler.Config (reading
// the --headers file).
func (f *crawlFlags) crawlerConfig() (crawler.Config, error) {
	cfg, err := f.netFlags.crawlerConfig()
	cfg.IncludeHosts, cfg.ExcludeHosts = f.includeHost, f.excludeHost
	cfg.Concurrency, cfg.MaxDepth, cfg.DisableEnrichment = f.concurrency, f.maxDepth, f.noEnrich
	cfg.PerHostConcurrency, cfg.Delay, cfg.MaxCatalogsPerSeed, cfg.DisableDNS = f.perHost, f.delay, f.maxCatalogs, f.noDNS
	cfg.DisableVerification, cfg.DIDCacheTTL = f.noVerify, f.didCacheTTL
	cfg.MaxRegistryPages, cfg.MaxRegistryServers = f.registryPages, f.registryServers
	return cfg, err
}

// crawlerConfig turns the network flags into a crawler.Config (reading the
// --headers file).
func (f *netFlags) crawlerConfig() (crawler.Config, error) {
	cfg := crawler.Config{
		UserAgent:    crawlerUserAgent(),
		DNSServer:    f.dnsServer,
		CAFile:       f.caFile,
		AllowPrivate: f.allowPrivate,
		Timeout:      f.timeout,
	}
	var err error
	if cfg.AllowCIDRs, err = parseCIDRs("allow-cidr", f.allowCIDR); err != nil {
		return cfg, err
	}
	if cfg.PortMap, err = parsePortMap(f.portMap); err != nil {
		return cfg, err
	}
	if f.headersFile != "" {
		data, err := os.ReadFile(f.headersFile)
		if err != nil {
			return cfg, fmt.Errorf("--headers: %w", err)
		}
		if cfg.HostHeaders, err = crawler.ParseHostHeaders(data); err != nil {
			return cfg, fmt.Errorf("--headers %s: %w", f.headersFile, err)
		}
	}
	return cfg, nil
}

// seedList returns the --seed values followed by the --seeds file's.
func (f *crawlFlags) seedList() ([]string, error) {
	seeds := f.fixedSeeds()
	if f.seedsFile != "" {
		more, err := readSeedsFile(f.seedsFile)
		if err != nil {
			return nil, err
		}
		seeds = append(seeds, more...)
	}
	return checkedSeeds(func() ([]string, error) { return seeds, nil })()
}

// readSeedsFile reads seeds one per line; blank lines and # comments are skipped.
func readSeedsFile(name string) ([]string, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--seeds: %w", err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--seeds %s: %w", name, err)
	}
	return out, nil
}

// crawlSink is where crawl results go: the index, or nowhere (--no-index,
// the report keeps the outcome). Close flushes.
type crawlSink interface {
	crawler.Sink
	Close(ctx context.Context) error
}

type discardSink struct{}

func (discardSink) Put(context.Context, normalize.CatalogResult) error { return nil }
func (discardSink) Close(context.Context) error                        { return nil }

// indexOptions say where 'agentfinder crawl' writes: the flags serve
// uses for the same index.
type indexOptions struct {
	meiliURL, meiliKey, meiliBin string
	index, dataDir, modelDir     string
	noEmbeddings                 bool
}

func (o *indexOptions) register(c *cli) {
	c.fs.StringVar(&o.meiliURL, "meili-url", "", "external Meilisearch `URL`; empty starts a managed Meilisearch under <data-dir>/meili")
	c.setEnv("meili-url", "MEILI_URL")
	c.fs.StringVar(&o.meiliKey, "meili-api-key", "", "API `key` of the external Meilisearch (prefer the environment variable)")
	c.setEnv("meili-api-key", "MEILI_API_KEY")
	c.fs.StringVar(&o.meiliBin, "meili-bin", "", "Meilisearch `binary` for the managed instance (default ./.bin/meilisearch, then PATH)")
	c.fs.StringVar(&o.index, "index", "agents", "Meilisearch index `name`")
	c.fs.StringVar(&o.dataDir, "data-dir", "./data", "`directory` of the managed Meilisearch")
	c.fs.StringVar(&o.modelDir, "model-dir", "./.cache/model", "`directory` of the sentence-embedding model")
	c.fs.BoolVar(&o.noEmbeddings, "no-embeddings", false, "index without vectors")
}

// indexSink writes crawl results to the Meilisearch index through ingest;
// Close flushes and stops a managed Meilisearch.
type indexSink struct {
	*ingest.Indexer
	managed *meili.Managed
	lock    *dataDirLock
	log     *slog.Logger
}

func (s *indexSink) Close(ctx context.Context) error {
	err := s.Indexer.Close(ctx)
	if s.managed != nil {
		if serr := s.managed.Stop(); serr != nil {
			s.log.Warn("stop managed meilisearch", "err", serr)
		}
	}
	s.lock.release()
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	st := s.Stats()
	s.log.Info("indexed", "results", st.Results, "upserted", st.Upserted, "unchanged", st.Unchanged, "deleted", st.Deleted, "conflicts", st.Conflicts)
	return nil
}

// openIndexSink connects ingest to the external Meilisearch (MEILI_URL,
// MEILI_API_KEY), to the managed one of the process holding --data-dir
// (a running serve), or starts a managed one, with embeddings when the
// model is present, as serve does.
func openIndexSink(ctx context.Context, o indexOptions, logger *slog.Logger) (crawlSink, error) {
	s := &indexSink{log: logger}
	url, key := o.meiliURL, o.meiliKey
	if url == "" {
		lock, err := lockDataDir(o.dataDir, "agentfinder crawl")
		var busy *dataDirBusyError
		switch {
		case errors.As(err, &busy):
			if url, key, err = reuseHolderMeili(ctx, busy); err != nil {
				return nil, fmt.Errorf("%w (or set MEILI_URL, or use --no-index)", err)
			}
			logger.Warn("data directory in use: indexing through its Meilisearch", "dir", o.dataDir, "holder", busy.Holder.String(), "meili", url)
		case err != nil:
			return nil, err
		default:
			s.lock = lock
			var managed *meili.Managed
			if url, key, managed, err = meiliServer(ctx, "", "", o.dataDir, meili.ManagedConfig{Bin: o.meiliBin}, lock, logger); err != nil {
				lock.release()
				return nil, fmt.Errorf("%w (or use --no-index)", err)
			}
			s.managed = managed
		}
	}
	icfg := ingest.Config{Index: o.index, Logger: logger.With("component", "ingest")}
	if !o.noEmbeddings {
		m, _, err := loadEmbedder(o.modelDir)
		switch {
		case err != nil:
			s.stopManaged()
			return nil, err
		case m == nil:
			logger.Warn("embedding model missing: indexing without vectors", "dir", o.modelDir)
		default:
			icfg.Embedder = m
		}
	}
	ix, err := ingest.New(ctx, meili.New(url, key), icfg)
	if err != nil {
		s.stopManaged()
		return nil, fmt.Errorf("ingest: %w", err)
	}
	s.Indexer = ix
	return s, nil
}

func (s *indexSink) stopManaged() {
	if s.managed != nil {
		_ = s.managed.Stop()
	}
	s.lock.release()
}

// progressSink counts results for the progress display.
type progressSink struct {
	next crawlSink
	prog *crawlProgress
}

func (p *progressSink) Put(ctx context.Context, res normalize.CatalogResult) error {
	p.prog.add(res.Catalog, len(res.Records))
	return p.next.Put(ctx, res)
}

// PutAll counts results and passes them on together to an index that
// takes them so (crawler.BatchSink: a registry walk's pages), else one by
// one.
func (p *progressSink) PutAll(ctx context.Context, results []normalize.CatalogResult) error {
	for _, res := range results {
		p.prog.add(res.Catalog, len(res.Records))
	}
	if bs, ok := p.next.(crawler.BatchSink); ok {
		return bs.PutAll(ctx, results)
	}
	for _, res := range results {
		if err := p.next.Put(ctx, res); err != nil {
			return err
		}
	}
	return nil
}

// CrawlStarted passes a crawl's start on to an index that wants it
// (crawler.Starter).
func (p *progressSink) CrawlStarted(ctx context.Context, seed string, at time.Time) error {
	if st, ok := p.next.(crawler.Starter); ok {
		return st.CrawlStarted(ctx, seed, at)
	}
	return nil
}

// crawlProgress shows a spinner with the host of the latest catalog, the
// counts so far and the number of seeds on stderr when it is a terminal.
type crawlProgress struct {
	bar      *progressbar.ProgressBar
	seeds    int
	mu       sync.Mutex
	host     string
	catalogs int64
	records  int64
}

func newCrawlProgress(stderr io.Writer, seeds int) *crawlProgress {
	p := &crawlProgress{seeds: seeds}
	if fh, ok := stderr.(*os.File); ok && term.IsTerminal(int(fh.Fd())) {
		p.bar = progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("crawling"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("catalogs"),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

func (p *crawlProgress) add(catalogURL string, records int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.catalogs++
	p.records += int64(records)
	if u, err := url.Parse(catalogURL); err == nil && u.Hostname() != "" {
		p.host = u.Hostname()
	}
	if p.bar != nil {
		p.bar.Describe(p.describe())
		_ = p.bar.Set64(p.catalogs)
	}
}

// describe is the progress line: "crawling HOST: N records (M seeds)".
func (p *crawlProgress) describe() string {
	host := p.host
	if host == "" {
		host = "..."
	}
	return fmt.Sprintf("crawling %s: %d records (%d %s)", host, p.records, p.seeds, plural(p.seeds, "seed", "seeds"))
}

func (p *crawlProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// printCrawlSummary prints catalogs by via and status, failure reasons,
// registries found and totals.
func printCrawlSummary(w io.Writer, rep *crawler.Report) {
	t := rep.Totals
	statuses := []string{string(normalize.StatusOK), string(normalize.StatusNotModified), string(normalize.StatusFailed)}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "VIA\t%s\n", strings.Join(statuses, "\t"))
	for _, via := range sortedKeys(t.ByVia) {
		row := []string{via}
		for _, s := range statuses {
			row = append(row, fmt.Sprint(t.ByVia[via][s]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\n", t.OK, t.NotModified, t.Failed)
	_ = tw.Flush()
	if len(t.Reasons) > 0 {
		reasons := sortedKeys(t.Reasons)
		sort.SliceStable(reasons, func(i, j int) bool { return t.Reasons[reasons[i]] > t.Reasons[reasons[j]] })
		fmt.Fprintf(w, "\nfailed:\n")
		for _, r := range reasons {
			fmt.Fprintf(w, "  %-20s %d\n", r, t.Reasons[r])
		}
		for _, c := range rep.Catalogs {
			if c.Status == normalize.StatusFailed {
				fmt.Fprintf(w, "  - %s (%s): %s\n", c.URL, c.Via, c.Reason)
			}
		}
	}
	if len(rep.Registries) > 0 {
		fmt.Fprintf(w, "\nregistries:\n")
		for _, r := range rep.Registries {
			fmt.Fprintf(w, "  %s (%s)\n", r.URL, r.Via)
		}
	}
	fmt.Fprintf(w, "\n%d seeds, %d catalogs, %d records, %d problems, %d requests", t.Seeds, t.Catalogs, t.Records, t.Problems, t.Requests)
	if t.Skipped > 0 {
		fmt.Fprintf(w, ", %d links not followed (depth or cap)", t.Skipped)
	}
	fmt.Fprintln(w)
}
