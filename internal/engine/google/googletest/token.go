package googletest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake of Google's OAuth 2 token endpoint for service accounts, written
// from Google's "Using OAuth 2.0 for Server to Server Applications"
// (developers.google.com/identity/protocols/oauth2/service-account, read
// 2026-11-23) and RFC 7523: POST token_uri with
// grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer and
// assertion=<JWT>, the JWT signed RS256 with the service account's key,
// its claims iss (the client_email), scope (space-separated), aud (the
// token_uri), iat and exp (at most an hour after iat). The answer is
// {"access_token", "expires_in", "token_type": "Bearer"}; a bad request is
// 400 {"error", "error_description"} (invalid_grant for a bad signature or
// claims, invalid_scope, unsupported_grant_type).

// jwtBearer is the grant type of the service account flow.
const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// CloudPlatformScope is the scope Vertex AI requires.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

var (
	keysOnce sync.Once
	keys     [2]*rsa.PrivateKey // the account's key, and another
)

// testKeys returns two RSA keys, made once per test binary (2048-bit keys
// take a while to make).
func testKeys() [2]*rsa.PrivateKey {
	keysOnce.Do(func() {
		for i := range keys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			keys[i] = k
		}
	})
	return keys
}

// serviceAccountJSON is a service account key file as the Google Cloud
// console downloads it.
func serviceAccountJSON(key *rsa.PrivateKey, keyID, email, project, tokenURI string) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	b, _ := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": project, "private_key_id": keyID,
		"private_key": string(pemKey), "client_email": email, "client_id": "104567890123456789012",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"universe_domain":             "googleapis.com",
	}, "", "  ")
	return b
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tokenError writes an OAuth error answer.
func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// handleToken serves POST /token.
func (v *Vertex) handleToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "Bad Request")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != jwtBearer {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+gt)
		return
	}
	scope, code, desc := v.checkAssertion(r.PostForm.Get("assertion"))
	if code != "" {
		tokenError(w, http.StatusBadRequest, code, desc)
		return
	}
	buf := make([]byte, 24)
	rand.Read(buf)
	tok := "ya29.fake-" + hex.EncodeToString(buf)
	v.mu.Lock()
	life := v.tokenLife
	// A token without the cloud-platform scope is issued, and refused by
	// Vertex AI (403 ACCESS_TOKEN_SCOPE_INSUFFICIENT).
	v.tokens[tok] = issued{expires: time.Now().Add(life), cloud: slices.Contains(strings.Fields(scope), CloudPlatformScope)}
	v.tokenFetches++
	v.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": int(life / time.Second), "token_type": "Bearer"})
}

// checkAssertion verifies the JWT: its RS256 signature with the account's
// public key, and its claims. It returns the scope asked for, or the OAuth
// error code and description.
func (v *Vertex) checkAssertion(jwt string) (scope, code, desc string) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "", "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
	}
	var header struct {
		Alg, Typ, Kid string
	}
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Iat   int64  `json:"iat"`
		Exp   int64  `json:"exp"`
		Sub   string `json:"sub"`
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
		return "", "invalid_grant", "Invalid JWT: malformed."
	}
	if header.Alg != "RS256" {
		return "", "invalid_grant", "Invalid JWT: alg must be RS256."
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&testKeys()[0].PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return "", "invalid_grant", "Invalid JWT Signature."
	}
	now := time.Now().Unix()
	switch {
	case claims.Iss != v.email:
		return "", "invalid_grant", "Invalid grant: account not found"
	case header.Kid != "" && header.Kid != v.keyID:
		return "", "invalid_grant", "Invalid JWT Signature."
	case claims.Aud != v.TokenURL():
		return "", "invalid_grant", "Invalid JWT: Failed audience check. The right audience is " + v.TokenURL()
	case claims.Iat > now+300 || claims.Exp < now || claims.Exp-claims.Iat > 3600:
		return "", "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
	case claims.Scope == "":
		return "", "invalid_scope", "Invalid oauth scope or ID token audience provided."
	}
	return claims.Scope, "", ""
}

// CredentialsSignedWithAnotherKey writes a service account key file whose
// token_uri is tokenURL but whose key is not the account's: the token
// endpoint answers 400 invalid_grant ("Invalid JWT Signature.").
func CredentialsSignedWithAnotherKey(t testing.TB, tokenURL string) string {
	return writeFile(t, "wrong-key.json", serviceAccountJSON(testKeys()[1], "3f1c0ffee0ddba11c0ffee0ddba11c0ffee0dd",
		"gengate@gengate-test.iam.gserviceaccount.com", "gengate-test", tokenURL))
}
