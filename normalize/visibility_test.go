package normalize

import "testing"

// TestRecordKey: a public record is keyed by its identifier (any
// spelling); a record only some groups may see has a key of its own per
// group set, whatever order or case the groups come in.
func TestRecordKey(t *testing.T) {
	id := "urn:ai:hr.test:people:salary-bands"
	if RecordKey(id, nil) != DocID(id) || RecordKey("urn:air:HR.test:people:salary-bands", nil) != DocID(id) {
		t.Error("a public record is not keyed by DocID")
	}
	hr := RecordKey(id, []string{"hr"})
	if hr == DocID(id) || hr != RecordKey("URN:AI:hr.test:people:salary-bands", []string{"HR"}) {
		t.Error("a hidden record shares the public key, or its key depends on spelling")
	}
	if RecordKey(id, []string{"hr", "people"}) != RecordKey(id, []string{"people", "HR"}) || RecordKey(id, []string{"hr", "people"}) == hr {
		t.Error("group sets: order matters, or two sets share a key")
	}
}
