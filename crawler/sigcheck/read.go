package sigcheck

import (
	"encoding/json"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// catalogFields are the members of a catalog object the checks read.
type catalogFields struct {
	host, signature json.RawMessage // nil when absent
	// entries are the catalog's entries that are objects (an entry's
	// index is its place in the list, others included).
	entries []entryFields
}

// readCatalog reads the members of the catalog object b the checks use in
// one pass over it, each entry's members included (a later duplicate
// member wins, as in a map); ok is false when b is not an object.
func readCatalog(b []byte) (cat catalogFields, ok bool) {
	_, err := rawjson.Object(b, rawjson.SkipSpace(b, 0), func(name []byte, at int) (int, error) {
		switch string(name) {
		case "entries":
			var end int
			cat.entries, end = readEntries(b, at)
			return end, nil
		case "host":
			cat.host = value(b, at)
			return at + len(cat.host), nil
		case "signature":
			cat.signature = value(b, at)
			return at + len(cat.signature), nil
		}
		return rawjson.SkipValue(b, at), nil
	})
	return cat, err == nil
}

// readEntries reads the entries array that starts at b[at] and returns
// where it ends; none when it is not an array.
func readEntries(b []byte, at int) ([]entryFields, int) {
	var list []entryFields
	n := 0
	end, err := rawjson.Array(b, at, func(at int) (int, error) {
		e, end, ok := readEntry(b, at)
		if ok {
			e.index = n
			list = append(list, e)
		}
		n++
		return end, nil
	})
	if err != nil {
		return nil, rawjson.SkipValue(b, at)
	}
	return list, end
}

// readEntry reads the members of the entry that starts at b[at] and
// returns where it ends; ok is false when it is not an object.
func readEntry(b []byte, at int) (e entryFields, end int, ok bool) {
	var identifier, typ, mediaType, url, digest json.RawMessage
	end, err := rawjson.Object(b, at, func(name []byte, at int) (int, error) {
		v := value(b, at)
		switch string(name) {
		case "identifier":
			identifier = v
		case "type":
			typ = v
		case "mediaType":
			mediaType = v
		case "url":
			url = v
		case "digest":
			digest = v
		case "data":
			e.rawData = v
		case "inline":
			e.inline = v
		case "version":
			e.version = v
		case "trustManifest":
			e.trustManifest = v
		case "trustManifests":
			e.trustManifests = v
		}
		return at + len(v), nil
	})
	if err != nil {
		return entryFields{}, rawjson.SkipValue(b, at), false
	}
	e.identifier, e.typ, e.url, e.digest = str(identifier), str(typ), str(url), str(digest)
	if e.typ == "" {
		e.typ = str(mediaType)
	}
	if !isNull(e.rawData) {
		e.data = e.rawData
	}
	if isNull(e.version) {
		e.version = nil
	}
	return e, end, true
}

// value is the JSON value that starts at b[at], capacity-limited so that
// an append copies.
func value(b []byte, at int) json.RawMessage {
	end := rawjson.SkipValue(b, at)
	return b[at:end:end]
}
