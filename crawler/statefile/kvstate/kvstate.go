// Package kvstate keeps a cluster's shared state in JetStream: named state
// documents (the scheduler's seed state with the crawler's validators, the
// prober's state, the pinged seeds) in an object store, as statefile.Doc,
// and small per-key values (registry walk cursors) in a key-value bucket,
// as Store. Whichever node leads the crawl reads and writes them, so a new
// leader starts where the last one stopped. A single node keeps files
// (statefile.File) and a Dir store instead.
//
// kvstate imports statefile and the NATS JetStream client; it must not
// import anything else of ours.
package kvstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/crawler/statefile"
)

// Bucket names.
const (
	DocsBucket = "agentfinder_state"
	KeysBucket = "agentfinder_keys"
)

// Docs is the object store of named state documents.
type Docs struct {
	os      jetstream.ObjectStore
	timeout time.Duration
}

// OpenDocs creates (or opens) the state document store.
func OpenDocs(ctx context.Context, js jetstream.JetStream, replicas int) (*Docs, error) {
	if replicas <= 0 {
		replicas = 1
	}
	os, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: DocsBucket, Description: "agentfinder shared state documents",
		Replicas: replicas, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("state store: %w", err)
	}
	return &Docs{os: os, timeout: 30 * time.Second}, nil
}

// Doc returns the document called name.
func (d *Docs) Doc(name string) statefile.Doc { return doc{d: d, name: name} }

type doc struct {
	d    *Docs
	name string
}

var _ statefile.Doc = doc{}

func (o doc) String() string { return "nats:" + DocsBucket + "/" + o.name }

// Load reads the document; a missing one is no state, and one that does not
// parse is left in place with a warning (the next Save replaces it).
func (o doc) Load(v any, log *slog.Logger) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.d.timeout)
	defer cancel()
	b, err := o.d.os.GetBytes(ctx, o.name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read state %s: %w", o, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		if log != nil {
			log.Warn("state document does not parse; starting from empty state", "doc", o.String(), "err", err)
		}
		return false, nil
	}
	return true, nil
}

// Save replaces the document: readers see the old one or the new one.
func (o doc) Save(b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.d.timeout)
	defer cancel()
	if _, err := o.d.os.PutBytes(ctx, o.name, b); err != nil {
		return fmt.Errorf("write state %s: %w", o, err)
	}
	return nil
}

// Store keeps small values by key: the per-key state of a service (a
// registry walk's cursor per registry).
type Store interface {
	// Get returns the value of key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put sets the value of key.
	Put(ctx context.Context, key string, value []byte) error
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Keys lists the keys, sorted.
	Keys(ctx context.Context) ([]string, error)
}

// ErrNotFound is Get's answer for a key with no value.
var ErrNotFound = errors.New("state key not found")

// KV is a Store in a JetStream key-value bucket. Keys may hold letters,
// digits and "-_=./"; values up to the NATS max payload.
type KV struct{ kv jetstream.KeyValue }

var _ Store = KV{}

// OpenKV creates (or opens) the per-key state bucket.
func OpenKV(ctx context.Context, js jetstream.JetStream, replicas int) (KV, error) {
	if replicas <= 0 {
		replicas = 1
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: KeysBucket, Description: "agentfinder shared per-key state",
		History: 1, Replicas: replicas, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return KV{}, fmt.Errorf("state bucket: %w", err)
	}
	return KV{kv: kv}, nil
}

// Get returns the value of key.
func (s KV) Get(ctx context.Context, key string) ([]byte, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", key, err)
	}
	return e.Value(), nil
}

// Put sets the value of key.
func (s KV) Put(ctx context.Context, key string, value []byte) error {
	if _, err := s.kv.Put(ctx, key, value); err != nil {
		return fmt.Errorf("state %s: %w", key, err)
	}
	return nil
}

// Delete removes key.
func (s KV) Delete(ctx context.Context, key string) error {
	if err := s.kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("state %s: %w", key, err)
	}
	return nil
}

// Keys lists the keys, sorted.
func (s KV) Keys(ctx context.Context) ([]string, error) {
	l, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("state keys: %w", err)
	}
	var keys []string
	for k := range l.Keys() {
		keys = append(keys, k)
	}
	_ = l.Stop() // the listing is complete once Keys is drained
	slices.Sort(keys)
	return keys, nil
}

// Dir is the single-node Store: one file per key in a directory, written
// atomically (statefile.Save). Keys are file names: no "/" or "..".
type Dir string

var _ Store = Dir("")

func (d Dir) path(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, `/\`) || key == "." || key == ".." {
		return "", fmt.Errorf("state key %q: not a file name", key)
	}
	return filepath.Join(string(d), key), nil
}

// Get returns the value of key.
func (d Dir) Get(_ context.Context, key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return b, err
}

// Put sets the value of key.
func (d Dir) Put(_ context.Context, key string, value []byte) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	return statefile.Save(p, value)
}

// Delete removes key.
func (d Dir) Delete(_ context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Keys lists the keys, sorted.
func (d Dir) Keys(context.Context) ([]string, error) {
	ents, err := os.ReadDir(string(d))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			keys = append(keys, e.Name())
		}
	}
	return keys, nil
}
