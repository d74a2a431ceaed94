package main

import (
	"context"
	"fmt"
	"io"
)

// runCrawl implements 'agentfinder crawl'. INTERIM: replaced by the issue that owns it.
func runCrawl(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentfinder crawl: not built yet")
	return 2
}
