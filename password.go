package gengate

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Password hashing: argon2id with the parameters OWASP recommends as a
// floor (19 MiB, 2 passes, 1 lane), a 16-byte random salt per password and
// a 32-byte hash, stored in the PHC string format:
//
//	$argon2id$v=19$m=19456,t=2,p=1$<salt, base64>$<hash, base64>
//
// The parameters travel with each hash, so raising them later leaves older
// hashes valid.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Password length limits, in bytes.
const (
	MinPasswordLength = 10
	MaxPasswordLength = 256
)

// dummyPasswordHash is verified against when a sign-in names no member, so
// that an unknown email costs the same work as a wrong password.
const dummyPasswordHash = "$argon2id$v=19$m=19456,t=2,p=1$ZHVtbXlzYWx0ZHVtbXlzYQ$CeH5gfq6p2MFvHtfJYh2m8Lc7i1dVuR3hXh6n1kQpjg"

// CheckPasswordRules reports whether a new password is acceptable, as an
// INVALID_REQUEST error on field "password".
func CheckPasswordRules(pw string) error {
	msg := ""
	switch {
	case len(pw) < MinPasswordLength:
		msg = fmt.Sprintf("must be at least %d characters", MinPasswordLength)
	case len(pw) > MaxPasswordLength:
		msg = fmt.Sprintf("must be at most %d bytes", MaxPasswordLength)
	default:
		return nil
	}
	return &Error{Code: EInvalid, Message: "password " + msg,
		Fields: []FieldError{{Field: "password", Code: FieldValue, Message: msg}}}
}

// HashPassword returns the stored form of a password.
func HashPassword(pw string) string {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("gengate: crypto/rand failed: " + err.Error())
	}
	sum := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// CheckPassword reports whether pw matches the stored hash. An empty or
// malformed hash (a member who never set a password) matches nothing, but
// still costs one argon2id run, like a real check.
func CheckPassword(encoded, pw string) bool {
	ok := true
	salt, want, m, t, p, err := parsePHC(encoded)
	if err != nil {
		ok = false
		salt, want, m, t, p, _ = parsePHC(dummyPasswordHash)
	}
	if len(pw) > MaxPasswordLength {
		pw = pw[:MaxPasswordLength]
		ok = false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1 && ok
}

// BurnPasswordCheck does the work of one password check and discards it:
// sign-in with an unknown email takes as long as with a wrong password.
func BurnPasswordCheck(pw string) { CheckPassword(dummyPasswordHash, pw) }

func parsePHC(s string) (salt, hash []byte, m, t uint32, p uint8, err error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return nil, nil, 0, 0, 0, fmt.Errorf("not an argon2id hash")
	}
	var v int
	if _, err = fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return nil, nil, 0, 0, 0, fmt.Errorf("argon2 version %q", parts[2])
	}
	if _, err = fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<22 || t > 16 {
		return nil, nil, 0, 0, 0, fmt.Errorf("argon2 parameters %q", parts[3])
	}
	b64 := base64.RawStdEncoding
	if salt, err = b64.DecodeString(parts[4]); err != nil {
		return nil, nil, 0, 0, 0, err
	}
	if hash, err = b64.DecodeString(parts[5]); err != nil || len(hash) < 16 {
		return nil, nil, 0, 0, 0, fmt.Errorf("argon2 hash")
	}
	return salt, hash, m, t, p, nil
}
