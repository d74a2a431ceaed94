package main

import (
	"context"
	"fmt"
	"io"
)

// runValidate implements 'agentfinder validate'. INTERIM: replaced by the issue that owns it.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentfinder validate: not built yet")
	return 2
}
