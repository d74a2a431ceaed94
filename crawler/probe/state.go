package probe

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler/statefile"
	"github.com/agentfinder/agentfinder/normalize"
)

// entry is the prober's state for one record as one catalog lists it: two
// catalogs claiming one identifier may name different endpoints, and only
// the claim ingest holds may speak for the record.
type entry struct {
	Identifier string           `json:"identifier"`
	Catalog    string           `json:"catalog"`
	Targets    []Target         `json:"targets"`
	Health     normalize.Health `json:"health"`
	Failures   int              `json:"failures,omitempty"` // consecutive failed probes
	NextDue    time.Time        `json:"nextDue"`
	// Tools are the tools last read from the endpoint (an open MCP
	// server), read again after Config.ToolsInterval.
	Tools       *normalize.ToolSet `json:"tools,omitempty"`
	ToolsReadAt time.Time          `json:"toolsReadAt,omitzero"`

	probing bool // a round has it in hand
}

// key is an entry's key in the prober's map.
func key(identifier, catalog string) string { return catalog + "\n" + identifier }

func (e *entry) key() string { return key(e.Identifier, e.Catalog) }

// host is the host of an entry's first endpoint (lower case; "" when it
// has none that parses).
func (e *entry) host() string {
	if len(e.Targets) == 0 {
		return ""
	}
	u, err := url.Parse(e.Targets[0].URL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// stateFile is the persisted state: one JSON document.
type stateFile struct {
	Version int      `json:"version"`
	Records []*entry `json:"records"`
}

const stateVersion = 1

// loadState reads the state file at path; a missing file, one of another
// version and a corrupt one (moved aside by statefile.Load) are an empty
// state.
func loadState(doc statefile.Doc, log *slog.Logger) ([]*entry, error) {
	var f stateFile
	found, err := doc.Load(&f, log)
	if err != nil {
		return nil, fmt.Errorf("probe state: %w", err)
	}
	if !found {
		return nil, nil
	}
	if f.Version != stateVersion {
		log.Warn("probe state of another version ignored", "path", doc.String(), "version", f.Version, "want", stateVersion)
		return nil, nil
	}
	return f.Records, nil
}

// saveState writes records to path atomically (statefile.Save), so a crash
// leaves the old state or the new one, never half.
func saveState(doc statefile.Doc, records []*entry) error {
	data, err := json.Marshal(stateFile{Version: stateVersion, Records: records})
	if err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	if err := doc.Save(data); err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	return nil
}

// stateDoc is where the state is kept: State, else the file at StatePath,
// else nowhere (nil).
func (c *Config) stateDoc() statefile.Doc {
	switch {
	case c.State != nil:
		return c.State
	case c.StatePath != "":
		return statefile.File(c.StatePath)
	}
	return nil
}
