package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/searchapi/mcpserver"
)

// runMCP implements 'agentfinder mcp': the MCP tools (search, get_agent,
// explore) over stdio, answering from an Agent Finder registry's HTTP API,
// so a desktop assistant can use any registry.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return mcpMain(ctx, args, nil, mcpserver.StdioTransport(os.Stdin, os.Stdout), stdout, stderr)
}

// mcpMain runs the MCP server on transport; stdout gets only --help (the
// server never starts then).
func mcpMain(ctx context.Context, args []string, getenv func(string) (string, bool), transport mcp.Transport, stdout, stderr io.Writer) int {
	c := newCLI("mcp", "[flags]\n\nServes the MCP tools search, get_agent and explore on stdin and stdout (the MCP stdio\n"+
		"transport, for desktop assistants), answering from an Agent Finder registry's HTTP API.")
	server := c.fs.String("server", "http://127.0.0.1:8080", "base URL of the Agent Finder registry")
	timeout := c.fs.Duration("timeout", 30*time.Second, "timeout of each request to the registry")
	var apiKey string
	c.apiKeyFlag(&apiKey)
	c.setEnv("server", "AGENTFINDER_SERVER")
	if code := c.parseOrExit(args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	if len(c.args) > 0 {
		fmt.Fprintf(stderr, "agentfinder mcp: unexpected arguments %q\n", c.args)
		return 2
	}
	remote, err := mcpserver.NewRemote(*server, apiClient(*server, apiKey, *timeout))
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder mcp: %v\n", err)
		return 2
	}
	srv := mcpserver.New(remote, mcpserver.Options{Name: "agentfinder", Version: version})
	if err := srv.Run(ctx, transport); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "agentfinder mcp: %v\n", err)
		return 1
	}
	return 0
}
