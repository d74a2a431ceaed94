package main

import (
	"context"
	"fmt"
	"io"
)

// runFixtures implements 'agentfinder fixtures'. INTERIM: replaced by the issue that owns it.
func runFixtures(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentfinder fixtures: not built yet")
	return 2
}
