// Package natstest runs an embedded NATS JetStream node for a test.
package natstest

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/scheduler/natsnode"
)

// Node starts one embedded JetStream node with its store in the test's
// temporary directory; it shuts down when the test ends.
func Node(t testing.TB) *natsnode.Node {
	t.Helper()
	node, err := natsnode.Start(natsnode.Config{Name: "t", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Shutdown)
	return node
}

// JetStream connects to node as name and returns that connection's
// JetStream API; the connection closes when the test ends.
func JetStream(t testing.TB, node *natsnode.Node, name string) jetstream.JetStream {
	t.Helper()
	nc, err := node.Connect(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := natsnode.JetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
