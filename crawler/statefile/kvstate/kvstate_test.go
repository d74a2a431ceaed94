package kvstate_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/crawler/statefile/kvstate"
	"github.com/agentfinder/agentfinder/fixtures/logbuf"
	"github.com/agentfinder/agentfinder/scheduler/natsnode/natstest"
)

func jetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	return natstest.JetStream(t, natstest.Node(t), "kvstate-test")
}

func TestDocsRoundTrip(t *testing.T) {
	docs, err := kvstate.OpenDocs(t.Context(), jetStream(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	d := docs.Doc("scheduler")
	var v map[string]string
	if found, err := d.Load(&v, nil); found || err != nil {
		t.Fatalf("empty store: found=%v err=%v", found, err)
	}
	// Larger than one NATS message: the object store chunks it.
	big := strings.Repeat("x", 3<<20)
	if err := d.Save([]byte(`{"seed":"` + big + `"}`)); err != nil {
		t.Fatal(err)
	}
	if found, err := d.Load(&v, nil); !found || err != nil || v["seed"] != big {
		t.Fatalf("after save: found=%v err=%v len=%d", found, err, len(v["seed"]))
	}
	// A document that does not parse is no state, with a warning.
	if err := d.Save([]byte("{not json")); err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	if found, err := d.Load(&v, slog.New(slog.NewTextHandler(&logs, nil))); found || err != nil {
		t.Fatalf("corrupt: found=%v err=%v", found, err)
	}
	if !strings.Contains(logs.String(), "does not parse") {
		t.Errorf("no warning for a corrupt document: %q", logs.String())
	}
}

func TestStores(t *testing.T) {
	kv, err := kvstate.OpenKV(t.Context(), jetStream(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    kvstate.Store
	}{
		{"kv", kv},
		{"dir", kvstate.Dir(t.TempDir())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := tc.s.Get(ctx, "registry.modelcontextprotocol.io"); !errors.Is(err, kvstate.ErrNotFound) {
				t.Fatalf("missing key: %v", err)
			}
			for _, k := range []string{"b.example", "a.example"} {
				if err := tc.s.Put(ctx, k, []byte("cursor-"+k)); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.s.Put(ctx, "b.example", []byte("cursor-2")); err != nil {
				t.Fatal(err)
			}
			if got, err := tc.s.Get(ctx, "b.example"); err != nil || !bytes.Equal(got, []byte("cursor-2")) {
				t.Fatalf("get: %q %v", got, err)
			}
			if keys, err := tc.s.Keys(ctx); err != nil || strings.Join(keys, ",") != "a.example,b.example" {
				t.Fatalf("keys: %v %v", keys, err)
			}
			if err := tc.s.Delete(ctx, "a.example"); err != nil {
				t.Fatal(err)
			}
			if err := tc.s.Delete(ctx, "a.example"); err != nil {
				t.Fatalf("deleting a missing key: %v", err)
			}
			if keys, err := tc.s.Keys(ctx); err != nil || strings.Join(keys, ",") != "b.example" {
				t.Fatalf("keys after delete: %v %v", keys, err)
			}
		})
	}
	if err := kvstate.Dir(t.TempDir()).Put(t.Context(), "../escape", nil); err == nil {
		t.Error("Dir took a key that is not a file name")
	}
}
