package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"
)

// runPing implements 'agentfinder ping': an IndexNow ping, so a registry
// crawls the changed URLs now instead of at its next scheduled visit.
func runPing(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return pingMain(ctx, args, nil, stdout, stderr)
}

func pingMain(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	c := newCLI("ping", "[flags] URL...\n\nTells an Agent Finder registry (IndexNow, POST /indexnow) that the URLs changed: catalogs, a page\nlinking one, or the host's home page, all on one host. The registry fetches the key file\nhttps://<host>/<key>.txt (or --key-location) and, when it holds the key, crawls them at once.")
	server := c.fs.String("server", "http://127.0.0.1:8080", "base URL of the Agent Finder server")
	key := c.fs.String("key", "", "the IndexNow `key` (8-128 characters a-z, A-Z, 0-9, -) published in the key file")
	keyLocation := c.fs.String("key-location", "", "`URL` of the key file when it is not https://<host>/<key>.txt (on the same host)")
	timeout := c.fs.Duration("timeout", 30*time.Second, "request timeout")
	var apiKey string
	c.apiKeyFlag(&apiKey)
	c.setEnv("server", "AGENTFINDER_SERVER")
	c.setEnv("key", "AGENTFINDER_INDEXNOW_KEY")
	c.noEnv("key-location", "timeout")
	if code := c.parseOrExit(args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	if len(c.args) == 0 || *key == "" {
		fmt.Fprintln(stderr, "agentfinder ping: give the changed URL(s) and --key\nRun 'agentfinder ping --help' for its flags.")
		return 2
	}
	u, err := url.Parse(c.args[0])
	if err != nil || u.Host == "" {
		fmt.Fprintf(stderr, "agentfinder ping: %q is not an absolute URL\n", c.args[0])
		return 2
	}
	body, _ := json.Marshal(map[string]any{"host": u.Host, "key": *key, "keyLocation": *keyLocation, "urlList": c.args})
	ans, err := postAPI(ctx, *server, apiKey, "/indexnow", body, *timeout, 1<<20)
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder ping: %v\n", err)
		return exitCodeOf(err)
	}
	if ans.code/100 != 2 {
		fmt.Fprintf(stderr, "agentfinder ping: %s\n", ans.errorText())
		return 1
	}
	fmt.Fprintf(stdout, "%s: accepted %d URL(s) of %s; the registry crawls them now\n", ans.status, len(c.args), u.Host)
	return 0
}
