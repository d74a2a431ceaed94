package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/agentfinder/agentfinder/fixtures"
)

// fixturesInfo is the first stdout line of 'agentfinder fixtures --json':
// what a crawl or serve of the fixture web needs.
type fixturesInfo struct {
	DNSServer    string   `json:"dnsServer"`
	CAFile       string   `json:"caFile"`
	HTTPSPort    int      `json:"httpsPort"`
	HTTPPort     int      `json:"httpPort"`
	Seeds        []string `json:"seeds"`
	HostileSeeds []string `json:"hostileSeeds,omitempty"`
	Flags        []string `json:"flags"`
	// ServeFlags are what a demo's serve adds to Flags (--demo only).
	ServeFlags []string `json:"serveFlags,omitempty"`
}

// demoServeSettings are the serve settings of a demo (name, value): a demo
// endpoint that is down shows as down at its first failed probe, not after
// three failures hours apart.
var demoServeSettings = [][2]string{{"probe-down-after", "1"}}

// runFixtures implements 'agentfinder fixtures': it serves the fixture web
// (HTTPS, HTTP and DNS on loopback) until ctx is done.
func runFixtures(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("fixtures", "[flags]\n\nServes the fixture web (HTTPS, HTTP and DNS on loopback) until interrupted.")
	fs := c.fs
	asJSON := fs.Bool("json", false, "print one JSON object (dnsServer, caFile, ports, seeds, flags) as the first stdout line")
	root := fs.String("root", "", "also serve `DIR` laid out as <host>/<path> (e.g. fixtures/relevance/catalogs)")
	noWorld := fs.Bool("no-world", false, "leave the built-in world out (serve only --root and --generate)")
	genHosts := fs.Int("generate", 0, "also serve a synthetic web of `N` publisher hosts")
	genEntries := fs.Int("entries", 10, "entries per generated host")
	genSeed := fs.Int64("seed", 1, "seed of the synthetic web")
	httpsPort := fs.Int("https-port", 0, "HTTPS `port` on 127.0.0.1 (0: a free one)")
	httpPort := fs.Int("http-port", 0, "HTTP `port` on 127.0.0.1 (0: a free one)")
	dnsPort := fs.Int("dns-port", 0, "DNS `port` on 127.0.0.1, UDP and TCP (0: a free one)")
	envFile := fs.String("env-file", "", "also write the crawler's settings for this web to `PATH`, a file a shell can source (AGENTFINDER_DNS_SERVER, _CA_FILE, _PORT_MAP, _ALLOW_PRIVATE, _SEED); removed on exit")
	demo := fs.Bool("demo", false, "the demo's seeds (make run): the demo publishers (signed catalogs, agents that answer) and the fixture MCP registry in, the world's test-only publishers (broken, spoofed, changing and catch-all catalogs) out; and serveFlags (also in --env-file) that show a down endpoint at its first failed probe")
	verbose := fs.Bool("verbose", false, "log every request to stderr")
	fs.BoolVar(verbose, "v", false, "short for --verbose")
	// The fixture web is a test tool: its flags read no environment (the
	// crawl settings' variables, such as AGENTFINDER_SEED, mean other things).
	fs.VisitAll(func(f *flag.Flag) { c.noEnv(f.Name) })
	if code := c.parseOrExit(args, nil, stdout, stderr); code >= 0 {
		return code
	}
	if len(c.args) > 0 {
		fmt.Fprintf(stderr, "agentfinder fixtures: unexpected argument %q\nRun 'agentfinder fixtures --help' for its flags.\n", c.args[0])
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	opts := fixtures.Options{
		Root:      *root,
		NoWorld:   *noWorld,
		Logger:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		HTTPSPort: *httpsPort,
		HTTPPort:  *httpPort,
		DNSPort:   *dnsPort,
	}
	if *genHosts > 0 {
		opts.Generated = fixtures.Generate(*genHosts, *genEntries, *genSeed)
	}
	web, err := fixtures.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder fixtures: %v\n", err)
		return 1
	}
	defer web.Close()

	info := newFixturesInfo(web, *demo)
	if *envFile != "" {
		if err := writeFixturesEnv(*envFile, info); err != nil {
			fmt.Fprintf(stderr, "agentfinder fixtures: %v\n", err)
			return 1
		}
		defer os.Remove(*envFile)
	}
	if err := printFixturesInfo(stdout, info, *asJSON); err != nil {
		fmt.Fprintf(stderr, "agentfinder fixtures: %v\n", err)
		return 1
	}
	select {
	case <-ctx.Done():
	case <-web.Done():
	}
	if err := web.Close(); err != nil {
		fmt.Fprintf(stderr, "agentfinder fixtures: %v\n", err)
		return 1
	}
	return 0
}

// newFixturesInfo describes the running web: its addresses, CA, seeds
// (demo: the demo seeds) and the crawl flags that reach it.
func newFixturesInfo(web *fixtures.Web, demo bool) fixturesInfo {
	seeds := web.Seeds()
	var serveFlags []string
	if demo {
		// The demo also walks the fixture MCP registry: real MCP servers
		// next to the catalogs.
		seeds = append(web.DemoSeeds(), web.RegistrySeeds()...)
		for _, kv := range demoServeSettings {
			serveFlags = append(serveFlags, "--"+kv[0]+"="+kv[1])
		}
	}
	return fixturesInfo{
		ServeFlags:   serveFlags,
		DNSServer:    web.DNSAddr,
		CAFile:       web.CAFile,
		HTTPSPort:    web.HTTPSPort,
		HTTPPort:     web.HTTPPort,
		Seeds:        seeds,
		HostileSeeds: web.HostileSeeds(),
		Flags: []string{
			"--dns-server=" + web.DNSAddr,
			"--ca-file=" + web.CAFile,
			"--allow-private",
			fmt.Sprintf("--port-map=443=%d,80=%d", web.HTTPSPort, web.HTTPPort),
		},
	}
}

// printFixturesInfo prints info as one JSON line, or for a person.
func printFixturesInfo(w io.Writer, info fixturesInfo, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(info)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\n", b)
		return nil
	}
	fmt.Fprintf(w, "fixture web: https 127.0.0.1:%d, http 127.0.0.1:%d, dns %s\n", info.HTTPSPort, info.HTTPPort, info.DNSServer)
	fmt.Fprintf(w, "CA certificate: %s\n", info.CAFile)
	fmt.Fprintf(w, "%d seeds, e.g. %v\n", len(info.Seeds), info.Seeds[:min(5, len(info.Seeds))])
	fmt.Fprintf(w, "crawl it with: agentfinder crawl")
	for _, f := range info.Flags {
		fmt.Fprintf(w, " %s", f)
	}
	fmt.Fprintf(w, " <seeds>\nstop with Ctrl-C\n")
	return nil
}

// env is the settings that reach the web as environment variables (name,
// value), the seeds included.
func (info fixturesInfo) env() [][2]string {
	env := [][2]string{
		{"AGENTFINDER_DNS_SERVER", info.DNSServer},
		{"AGENTFINDER_CA_FILE", info.CAFile},
		{"AGENTFINDER_PORT_MAP", fmt.Sprintf("443=%d,80=%d", info.HTTPSPort, info.HTTPPort)},
		{"AGENTFINDER_ALLOW_PRIVATE", "true"},
		{"AGENTFINDER_SEED", strings.Join(info.Seeds, ",")},
	}
	for _, f := range info.ServeFlags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		env = append(env, [2]string{envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_")), value})
	}
	return env
}

// writeFixturesEnv writes the settings that reach the fixture web as
// environment variables a shell can source, atomically (a reader waiting
// for the file never sees half of it).
func writeFixturesEnv(path string, info fixturesInfo) error {
	var b strings.Builder
	b.WriteString("# Written by agentfinder fixtures: the settings that reach its web (gone when it stops).\n")
	for _, kv := range info.env() {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	if err := renameio.WriteFile(path, []byte(b.String()), 0o600, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("--env-file: %w", err)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell: single quotes, with each ' as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
