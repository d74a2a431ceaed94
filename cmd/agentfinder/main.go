// Command agentfinder is the one binary of Agent Finder: it crawls
// ai-catalog.json manifests, indexes them in Meilisearch and serves the
// Agent Finder search API. Only this package reads flags and environment.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand: it gets its arguments (without the name) and
// returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"serve", "crawl on a schedule, index, and serve the search API", runServe},
		{"crawl", "crawl seeds once and index what was found", runCrawl},
		{"search", "query an Agent Finder server", runSearch},
		{"ping", "tell a registry that catalogs changed (IndexNow), so it crawls them now", runPing},
		{"mcp", "serve the MCP tools over stdio from an Agent Finder server", runMCP},
		{"validate", "check an ai-catalog.json file or URL", runValidate},
		{"fixtures", "serve the fixture web (HTTPS, HTTP, DNS) on loopback", runFixtures},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "agentfinder %s: the search engine for AI agents\n\nUsage:\n  agentfinder <command> [flags]\n\nCommands:\n", version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-9s %s\n", "version", "print the version")
	fmt.Fprintf(w, "  %-9s %s\n", "help", "show this list, or a command's flags (help COMMAND)")
	fmt.Fprintf(w, "\nRun 'agentfinder <command> --help' (or 'agentfinder help <command>') for a command's flags.\n")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the exit code: 2 for usage errors.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintf(stdout, "agentfinder %s\n", version)
		return 0
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" && args[1] != "help" && args[1] != "version" {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	names := []string{"version", "help"}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "agentfinder: unknown command %q", args[0])
	if s := closest(args[0], names); s != "" {
		fmt.Fprintf(stderr, " (did you mean %q?)", s)
	}
	fmt.Fprintf(stderr, "\n\n")
	usage(stderr)
	return 2
}
