package main

import (
	"context"
	"fmt"
	"io"
)

// runSearch implements 'agentfinder search'. INTERIM: replaced by the issue that owns it.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentfinder search: not built yet")
	return 2
}
