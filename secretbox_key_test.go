package gengate_test

import (
	"testing"

	"github.com/gengate/gengate"
)

// TestSecretBoxOtherKey: a value sealed under one server key, opened with
// another, is the SERVER_KEY_MISMATCH error (503 on the API, with the
// operator's instruction), not an unclassified error (500).
func TestSecretBoxOtherKey(t *testing.T) {
	a, _ := gengate.NewSecretBox([]byte("the first server key, 32 bytes or more"))
	b, _ := gengate.NewSecretBox([]byte("another server key, also 32 bytes long"))
	sealed := a.Seal("a file token", "file-1")
	if v, err := a.Open(sealed, "file-1"); err != nil || v != "a file token" {
		t.Fatalf("open with the same key: %q %v", v, err)
	}
	_, err := b.Open(sealed, "file-1")
	if gengate.ErrorCode(err) != gengate.EServerKey {
		t.Errorf("open with another key: %v (code %q), want %s", err, gengate.ErrorCode(err), gengate.EServerKey)
	}
}
