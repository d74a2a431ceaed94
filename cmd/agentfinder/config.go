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
	"sort"
	"strconv"
	"strings"
	"time"

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
	envName  map[string]string // flag name -> environment variable
	extraEnv [][2]string       // environment-only settings for --help: name, doc
	args     []string          // positional arguments after parse
}

// newCLI returns a flag set for "agentfinder <name>"; synopsis is the usage
// line after the command name and a blank line of description.
func newCLI(name, synopsis string, out io.Writer) *cli {
	c := &cli{
		fs:       flag.NewFlagSet(name, flag.ContinueOnError),
		name:     name,
		synopsis: synopsis,
		envName:  map[string]string{},
	}
	c.fs.SetOutput(out)
	c.fs.Usage = func() { c.usage(out) }
	return c
}

// envFor is the environment variable of a flag.
func (c *cli) envFor(name string) string {
	if e, ok := c.envName[name]; ok {
		return e
	}
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// setEnv gives a flag a conventional environment variable instead of
// AGENTFINDER_<NAME>.
func (c *cli) setEnv(flagName, env string) { c.envName[flagName] = env }

// envOnly documents a setting that is read from the environment only (a
// secret that should not appear in a process listing).
func (c *cli) envOnly(env, doc string) { c.extraEnv = append(c.extraEnv, [2]string{env, doc}) }

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: agentfinder %s %s\n\nFlags (each also read from the environment variable shown):\n", c.name, c.synopsis)
	c.fs.VisitAll(func(f *flag.Flag) {
		kind, doc := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n    \t%s\n    \t[env %s", line, strings.ReplaceAll(doc, "\n", "\n    \t"), c.envFor(f.Name))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" && f.DefValue != "0s" {
			fmt.Fprintf(w, "; default %s", f.DefValue)
		}
		fmt.Fprintln(w, "]")
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
// It returns flag.ErrHelp for -h/--help after printing the usage.
func (c *cli) parse(args []string, getenv func(string) (string, bool)) error {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	positional, err := parseInterspersed(c.fs, args)
	if err != nil {
		return err
	}
	c.args = positional
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	c.fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		env := c.envFor(f.Name)
		v, ok := getenv(env)
		if !ok || v == "" {
			return
		}
		if l, isList := f.Value.(*stringList); isList {
			for _, item := range splitList(v) {
				if err := l.Set(item); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", env, err))
				}
			}
			return
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("invalid value %q for %s: %w", v, env, err))
		}
	})
	return errors.Join(errs...)
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
// on, 0 after --help, 2 after a usage error (already printed).
func (c *cli) parseOrExit(args []string, getenv func(string) (string, bool), stderr io.Writer) int {
	err := c.parse(args, getenv)
	switch {
	case err == nil:
		return -1
	case errors.Is(err, flag.ErrHelp):
		return 0
	default:
		if !strings.HasPrefix(err.Error(), "flag provided but not defined") {
			fmt.Fprintf(stderr, "agentfinder %s: %v\n", c.name, err)
		}
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
	seedsFile   string
	includeHost stringList
	excludeHost stringList
	concurrency int
	maxDepth    int
	noEnrich    bool
}

// register adds the crawl flags to c.
func (f *crawlFlags) register(c *cli) {
	f.netFlags.register(c)
	c.fs.Var(&f.seeds, "seed", "a `domain or URL` to crawl (repeatable)")
	c.fs.StringVar(&f.seedsFile, "seeds", "", "`file` of seeds: one domain or URL per line, # comments (re-read on SIGHUP)")
	c.fs.Var(&f.includeHost, "include-host", "only fetch hosts matching this `pattern` (path.Match, repeatable)")
	c.fs.Var(&f.excludeHost, "exclude-host", "never fetch hosts matching this `pattern` (path.Match, repeatable)")
	c.fs.IntVar(&f.concurrency, "crawl-concurrency", 16, "requests in flight across all crawls")
	c.fs.IntVar(&f.maxDepth, "max-depth", 4, "how deep nested catalogs and collections are followed")
	c.fs.BoolVar(&f.noEnrich, "no-enrich", false, "do not fetch the artifacts (A2A cards, MCP server.json) entries point to")
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
