package gengate

import "strings"

// A file's URL token (/files/<token>.<ext>: an output, NewFileToken, or an
// upload, NewToken) is the file's only key, so like API keys and sessions
// it is never stored in clear. A store keeps two forms of it:
//
//   - FileTokenDigest(token), which it looks the file up by: the token's
//     first 8 characters (for an output, its time: rows go to the end of
//     the index, NewFileToken) and the SHA-256 of the whole token. The
//     remaining 24 random characters (about 143 bits) are not in it, and
//     a digest is not a token: no digest is the digest of itself.
//   - The token sealed (SecretBox, under the server's key, bound to the
//     file's id), which it opens to show the file's URL again (a task read
//     after its finish). A copy of the database without the key shows no
//     URL; a key other than the one it was sealed with opens nothing.

// FileTokenDigest is the form of a file's URL token that a store looks
// the file up by.
func FileTokenDigest(token string) string {
	prefix := token
	if len(prefix) > fileTokenPrefix {
		prefix = prefix[:fileTokenPrefix]
	}
	return prefix + fileDigestMark + HashKey(token)
}

// IsFileTokenDigest reports whether s has the form FileTokenDigest gives,
// which no token has (tokens are base62).
func IsFileTokenDigest(s string) bool { return strings.Contains(s, fileDigestMark) }

const (
	// fileTokenPrefix is the length of an output token's time
	// (NewFileToken), which its digest keeps.
	fileTokenPrefix = 8
	fileDigestMark  = "~"
)

// SealFileToken seals a file's URL token for its record (owner: the file's
// id); OpenFileToken opens it.
func (b *SecretBox) SealFileToken(token, fileID string) string {
	return b.Seal(token, FileTokenOwner(fileID)...)
}

// FileTokenOwner is the owner a file's URL token is sealed for.
func FileTokenOwner(fileID string) []string { return []string{"file", fileID} }

// OpenFileToken opens what SealFileToken sealed for the same file.
func (b *SecretBox) OpenFileToken(sealed, fileID string) (string, error) {
	return b.Open(sealed, FileTokenOwner(fileID)...)
}
