package main

import (
	"context"
	"fmt"
	"io"
)

// runServe implements 'agentfinder serve'. INTERIM: replaced by the issue that owns it.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentfinder serve: not built yet")
	return 2
}
