package main

// Shared flag and environment handling for the subcommands. Every flag can
// also be given as an environment variable AGENTFINDER_<NAME> (upper case,
// dashes as underscores: --dns-server is AGENTFINDER_DNS_SERVER); a flag on
// the command line wins over the environment. A few flags keep a
// conventional variable instead (--meili-url is MEILI_URL).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meili"
)

// envPrefix prefixes every flag's environment variable.
const envPrefix = "AGENTFINDER_"

// cli is a flag set whose flags also read the environment.
type cli struct {
	fs       *flag.FlagSet
	name     string
	synopsis string
	envName  map[string]string // flag name -> environment variable ("" for none)
	extraEnv [][2]string       // environment-only settings for --help: name, doc
	args     []string          // positional arguments after parse
}

// newCLI returns a flag set for "agentfinder <name>"; synopsis is the usage
// line after the command name and a blank line of description. parseOrExit
// prints the help (stdout) and errors (stderr); the flag package prints
// nothing itself.
func newCLI(name, synopsis string) *cli {
	c := &cli{
		fs:       flag.NewFlagSet(name, flag.ContinueOnError),
		name:     name,
		synopsis: synopsis,
		envName:  map[string]string{},
	}
	c.fs.SetOutput(io.Discard)
	c.fs.Usage = func() {}
	return c
}

// envFor is the environment variable of a flag ("" when it has none).
func (c *cli) envFor(name string) string {
	if e, ok := c.envName[name]; ok {
		return e
	}
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// setEnv gives a flag a conventional environment variable instead of
// AGENTFINDER_<NAME>.
func (c *cli) setEnv(flagName, env string) { c.envName[flagName] = env }

// noEnv marks flags that read no environment variable (command-local
// switches such as --json, whose AGENTFINDER_ name would collide with
// another command's setting).
func (c *cli) noEnv(flagNames ...string) {
	for _, n := range flagNames {
		c.envName[n] = ""
	}
}

// envOnly documents a setting that is read from the environment only (a
// secret that should not appear in a process listing).
func (c *cli) envOnly(env, doc string) { c.extraEnv = append(c.extraEnv, [2]string{env, doc}) }

func (c *cli) usage(w io.Writer) {
	withEnv := false
	c.fs.VisitAll(func(f *flag.Flag) { withEnv = withEnv || c.envFor(f.Name) != "" })
	fmt.Fprintf(w, "Usage: agentfinder %s %s\n\nFlags", c.name, c.synopsis)
	if withEnv {
		fmt.Fprint(w, " (also read from the environment variable shown)")
	}
	fmt.Fprint(w, ":\n")
	c.fs.VisitAll(func(f *flag.Flag) {
		kind, doc := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		var notes []string
		if env := c.envFor(f.Name); env != "" {
			notes = append(notes, "env "+env)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" && f.DefValue != "0s" {
			notes = append(notes, "default "+f.DefValue)
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(doc, "\n", "\n    \t"))
		if len(notes) > 0 {
			fmt.Fprintf(w, "    \t[%s]\n", strings.Join(notes, "; "))
		}
	})
	if len(c.extraEnv) > 0 {
		fmt.Fprintf(w, "\nEnvironment only:\n")
		for _, e := range c.extraEnv {
			fmt.Fprintf(w, "  %s\n    \t%s\n", e[0], e[1])
		}
	}
}

// parse parses args, then sets every flag not given on the command line from
// its environment variable (looked up with getenv; nil means os.LookupEnv).
// It returns flag.ErrHelp for -h/--help; other errors say what was wrong
// and what was expected.
func (c *cli) parse(args []string, getenv func(string) (string, bool)) error {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	positional, err := parseInterspersed(c.fs, args)
	if err != nil {
		return c.explain(err)
	}
	c.args = positional
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	c.fs.VisitAll(func(f *flag.Flag) {
		env := c.envFor(f.Name)
		if given[f.Name] || env == "" {
			return
		}
		v, ok := getenv(env)
		if !ok || v == "" {
			return
		}
		if l, isList := f.Value.(*stringList); isList {
			for _, item := range splitList(v) {
				if err := l.Set(item); err != nil {
					errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
				}
			}
			return
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %s", env, v, expectation(f, err)))
		}
	})
	return errors.Join(errs...)
}

// flagErrRE picks the flag name out of the flag package's parse errors.
var flagErrRE = regexp.MustCompile(`^(?:invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): |flag provided but not defined: -+(\S+)$|flag needs an argument: -+(\S+)$)`)

// explain rewrites a flag package error in this command's terms: double
// dashes, what a bad value should look like, the closest known flag.
func (c *cli) explain(err error) error {
	m := flagErrRE.FindStringSubmatch(err.Error())
	switch {
	case errors.Is(err, flag.ErrHelp) || m == nil:
		return err
	case m[2] != "":
		if f := c.fs.Lookup(m[2]); f != nil {
			return fmt.Errorf("--%s %q: %s", m[2], m[1], expectation(f, errors.New(strings.TrimPrefix(err.Error(), m[0]))))
		}
	case m[3] != "":
		msg := fmt.Sprintf("unknown flag --%s", m[3])
		var names []string
		c.fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := closest(m[3], names); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
		return errors.New(msg)
	case m[4] != "":
		return fmt.Errorf("--%s needs a value", m[4])
	}
	return err
}

// expectation says what a flag's value should look like, for errors.
func expectation(f *flag.Flag, err error) string {
	g, _ := f.Value.(flag.Getter)
	var v any
	if g != nil {
		v = g.Get()
	}
	switch v.(type) {
	case time.Duration:
		return "want a duration such as 5s, 1m30s or 2h"
	case bool:
		return "want true or false"
	case int, int64, uint, uint64:
		return "want a whole number"
	case float64:
		return "want a number such as 0.5"
	}
	if err != nil {
		return err.Error()
	}
	return "invalid value"
}

// closest returns the candidate nearest to s (edit distance at most a third
// of its length, at least 2), or "".
func closest(s string, candidates []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD || (d == bestD && best != "" && c < best) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseInterspersed parses args with fs, letting flags follow positional
// arguments ("search weather --json"); everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parseOrExit runs parse and turns its outcome into an exit code: -1 to go
// on, 0 after --help (printed to stdout), 2 after a usage error (printed to
// stderr with a pointer to --help).
func (c *cli) parseOrExit(args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	err := c.parse(args, getenv)
	switch {
	case err == nil:
		return -1
	case errors.Is(err, flag.ErrHelp):
		c.usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "agentfinder %s: %v\nRun 'agentfinder %s --help' for its flags.\n", c.name, err, c.name)
		return 2
	}
}

// splitList splits an environment value of a repeatable flag on commas,
// whitespace and newlines.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set appends v.
func (l *stringList) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return errors.New("empty value")
	}
	*l = append(*l, v)
	return nil
}

// newLogger builds the process logger: format "text" or "json", level
// debug, info, warn or error.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// parseCIDRs parses the values of a CIDR flag (--allow-cidr,
// --federation-allow-cidr, --trusted-proxy; named in errors); a bare address
// is a one-address prefix.
func parseCIDRs(flagName string, list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("--%s %q: not a CIDR prefix or address", flagName, s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// parsePortMap parses --port-map values "443=8443" (several may be given,
// also comma-separated).
func parsePortMap(list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, item := range list {
		for _, kv := range splitList(item) {
			from, to, ok := strings.Cut(kv, "=")
			if !ok || !isPort(from) || !isPort(to) {
				return nil, fmt.Errorf("--port-map %q: want FROM=TO ports, e.g. 443=8443", kv)
			}
			out[from] = to
		}
	}
	return out, nil
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 65536
}

// sortedKeys returns m's keys sorted (for stable logs).
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// netFlags are the network flags of every command that fetches catalogs
// (serve, crawl, validate): how names resolve, which ports and addresses
// are dialled, which CAs are trusted, which headers go to which host.
type netFlags struct {
	dnsServer    string
	caFile       string
	allowPrivate bool
	allowCIDR    stringList
	headersFile  string
	portMap      stringList
	timeout      time.Duration
}

// register adds the network flags to c.
func (f *netFlags) register(c *cli) {
	c.fs.StringVar(&f.dnsServer, "dns-server", "", "DNS server `host:port` for every lookup (default: the system resolver)")
	c.fs.StringVar(&f.caFile, "ca-file", "", "PEM `file` of extra trusted CA certificates (enterprise or test CAs)")
	c.fs.BoolVar(&f.allowPrivate, "allow-private", false, "allow crawling loopback and private addresses (enterprise; off for the public web)")
	c.fs.Var(&f.allowCIDR, "allow-cidr", "allow crawling this `CIDR` even if private (repeatable)")
	c.fs.StringVar(&f.headersFile, "headers", "", "JSON `file` of per-host request headers: {\"hosts\": {\"*.corp.example\": {\"Authorization\": \"Bearer ...\"}}}")
	c.fs.Var(&f.portMap, "port-map", "dial `FROM=TO` port instead (e.g. 443=8443; for test webs and port forwarding; repeatable)")
	c.fs.DurationVar(&f.timeout, "fetch-timeout", 15*time.Second, "timeout of one HTTP request")
}

// crawlFlags are the crawler and seed flags shared by serve and crawl.
type crawlFlags struct {
	netFlags
	seeds       stringList
	registries  stringList
	seedsFile   string
	includeHost stringList
	excludeHost stringList
	concurrency int
	perHost     int
	delay       time.Duration
	maxCatalogs int
	noDNS       bool
	maxDepth    int
	noEnrich    bool
	noVerify    bool
	didCacheTTL time.Duration

	registryPages, registryServers int
}

// fixedSeeds are the --seed values and a registry seed for each --registry.
func (f *crawlFlags) fixedSeeds() []string {
	out := append([]string(nil), f.seeds...)
	for _, r := range f.registries {
		out = append(out, crawler.RegistrySeedWord+" "+r)
	}
	return out
}

// register adds the crawl flags to c.
func (f *crawlFlags) register(c *cli) {
	f.netFlags.register(c)
	c.fs.Var(&f.seeds, "seed", "a `domain or URL` to crawl, optionally followed by groups=a,b (only those groups may see its records; repeatable)")
	c.fs.Var(&f.registries, "registry", "an MCP registry's base `URL` to walk (https://registry.modelcontextprotocol.io), optionally followed by groups=a,b; the same as --seed 'registry URL' (repeatable)")
	c.fs.StringVar(&f.seedsFile, "seeds", "", "`file` of seeds: one domain or URL per line, or 'registry URL' for an MCP registry, optionally followed by groups=a,b; # comments (re-read on SIGHUP)")
	c.fs.IntVar(&f.registryPages, "registry-max-pages", 1000, "list pages one walk of an MCP registry fetches at most (the next run resumes)")
	c.fs.IntVar(&f.registryServers, "registry-max-servers", 100000, "server versions one walk of an MCP registry reads at most (the next run resumes)")
	c.fs.Var(&f.includeHost, "include-host", "only fetch hosts matching this `pattern` (path.Match, repeatable)")
	c.fs.Var(&f.excludeHost, "exclude-host", "never fetch hosts matching this `pattern` (path.Match, repeatable)")
	c.fs.IntVar(&f.concurrency, "crawl-concurrency", 16, "requests in flight across all crawls")
	c.fs.IntVar(&f.perHost, "per-host", 2, "requests in flight per host (negative: unlimited)")
	c.fs.DurationVar(&f.delay, "delay", 0, "minimum pause between requests to one host (robots.txt Crawl-delay may raise it)")
	c.fs.IntVar(&f.maxCatalogs, "max-catalogs", 1000, "catalogs fetched per seed at most")
	c.fs.BoolVar(&f.noDNS, "no-dns", false, "skip DNS SVCB/TXT discovery")
	c.fs.IntVar(&f.maxDepth, "max-depth", 4, "how deep nested catalogs and collections are followed")
	c.fs.BoolVar(&f.noEnrich, "no-enrich", false, "do not fetch the artifacts (A2A cards, MCP server.json) entries point to")
	c.fs.BoolVar(&f.noVerify, "no-verify", false, "do not check signatures (no DID documents fetched) nor artifact and attestation digests: trust is then domain or none")
	c.fs.DurationVar(&f.didCacheTTL, "did-cache-ttl", time.Hour, "how long a signer's fetched DID document (its keys) is used before it is fetched again")
}

// meiliServer returns the Meilisearch to use: the external one at url (with
// key) when url is set, else a managed child process started with mc (its
// DataDir under dataDir/meili, its Logger log), recorded in lock (the
// caller's hold on dataDir) for other processes to reuse. managed is nil for
// an external server; the caller stops it.
func meiliServer(ctx context.Context, url, key, dataDir string, mc meili.ManagedConfig, lock *dataDirLock, log *slog.Logger) (_, _ string, managed *meili.Managed, err error) {
	if url != "" {
		return url, key, nil, nil
	}
	mc.DataDir, mc.Logger = filepath.Join(dataDir, "meili"), log
	m, err := meili.StartManaged(ctx, mc)
	if err != nil {
		return "", "", nil, fmt.Errorf("start managed meilisearch (set MEILI_URL to use an external one): %w", err)
	}
	if err := lock.setMeiliURL(m.URL); err != nil {
		_ = m.Stop()
		return "", "", nil, err
	}
	return m.URL, m.APIKey, m, nil
}

// loadEmbedder loads the sentence-embedding model from dir. A missing model
// is not an error: it returns nil and a note saying why search is keyword only.
func loadEmbedder(dir string) (m *embed.Model, note string, err error) {
	m, err = embed.Load(dir)
	switch {
	case errors.Is(err, embed.ErrModelMissing):
		return nil, fmt.Sprintf("model not found in %s (run make model); keyword search only", dir), nil
	case err != nil:
		return nil, "", fmt.Errorf("load embedding model: %w", err)
	}
	return m, "", nil
}

// checkedSeeds wraps a seeds loader so that a seed with a bad option (say
// "groups=" naming no group) fails the load with a clear error instead of
// being crawled as public.
func checkedSeeds(load func() ([]string, error)) func() ([]string, error) {
	return func() ([]string, error) {
		list, err := load()
		if err != nil {
			return nil, err
		}
		for _, sd := range list {
			if _, err := crawler.ParseSeed(sd); err != nil {
				return nil, err
			}
		}
		return list, nil
	}
}
