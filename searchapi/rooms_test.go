package searchapi

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rooms of searchapi (docs/ARCHITECTURE.md): the server at the root,
// the engine (searchapi/search and the packages only it uses), the door kit
// (searchapi/door) and one package per door.
const modulePath = "github.com/agentfinder/agentfinder/"

// doors are the door packages: each turns one protocol's requests into
// engine queries and never imports another door.
var doors = []string{"adp", "api", "haidip", "indexnow", "mcpserver", "registryapi", "tools", "web", "xu"}

// meiliReaders may import the Meilisearch client: the engine, the fused
// search it runs, and the tests' index kit.
var meiliReaders = []string{"search", "hybrid", "searchtest"}

// TestRooms holds searchapi to its rooms: the root at most 15 source
// files, no package over 30, no door importing another door (a package
// that imports the door kit is a door and must be listed as one), and
// only the engine importing the Meilisearch client.
func TestRooms(t *testing.T) {
	pkgs := searchapiPackages(t)
	if n := len(pkgs["."].GoFiles); n > 15 {
		t.Errorf("searchapi's root has %d source files, want at most 15", n)
	}
	for dir, p := range pkgs {
		if len(p.GoFiles) > 30 {
			t.Errorf("searchapi/%s has %d source files, want at most 30", dir, len(p.GoFiles))
		}
		for _, imp := range p.Imports {
			checkImport(t, dir, imp)
		}
	}
}

// checkImport checks one import of the package in searchapi/dir.
func checkImport(t *testing.T, dir, imp string) {
	t.Helper()
	if strings.HasPrefix(imp, "github.com/meilisearch/meilisearch-go") && !slices.Contains(meiliReaders, dir) {
		t.Errorf("searchapi/%s imports the Meilisearch client; only the engine (%v) may", dir, meiliReaders)
	}
	to, ok := strings.CutPrefix(imp, modulePath+"searchapi/")
	if !ok || dir == "." {
		return
	}
	if to == "door" && dir != "door" && !slices.Contains(doors, dir) {
		t.Errorf("searchapi/%s imports the door kit but is not listed as a door", dir)
	}
	if slices.Contains(doors, dir) && slices.Contains(doors, to) {
		t.Errorf("door searchapi/%s imports door searchapi/%s: doors share only the engine and searchapi/door", dir, to)
	}
}

// searchapiPackages reads every package under searchapi (its non-test
// files only), by directory relative to searchapi.
func searchapiPackages(t *testing.T) map[string]*build.Package {
	t.Helper()
	pkgs := map[string]*build.Package{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		pkgs[filepath.ToSlash(path)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{".", "search", "door"}, doors...) {
		if pkgs[want] == nil {
			t.Fatalf("no package searchapi/%s: the rooms moved; update TestRooms and docs/ARCHITECTURE.md", want)
		}
	}
	return pkgs
}
