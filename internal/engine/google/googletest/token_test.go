package googletest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// jwtFor signs claims with key as a service account's assertion.
func jwtFor(t *testing.T, key *rsa.PrivateKey, alg string, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	signed := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestTokenEndpointChecksTheAssertion: the fake token endpoint issues a
// token only for a JWT bearer grant whose assertion is signed RS256 with
// the account's key and claims the account (iss), the token endpoint
// (aud), a scope and a lifetime of at most an hour; each other case is
// Google's 400 with its OAuth error code.
func TestTokenEndpointChecksTheAssertion(t *testing.T) {
	v := NewVertex(t)
	now := time.Now().Unix()
	good := func() map[string]any {
		return map[string]any{"iss": v.email, "scope": CloudPlatformScope, "aud": v.TokenURL(), "iat": now, "exp": now + 3600}
	}
	with := func(k string, val any) map[string]any { c := good(); c[k] = val; return c }
	keys := testKeys()
	for _, c := range []struct {
		name, grant, assertion, wantError string
	}{
		{"good", jwtBearer, jwtFor(t, keys[0], "RS256", good()), ""},
		{"another key", jwtBearer, jwtFor(t, keys[1], "RS256", good()), "invalid_grant"},
		{"another account", jwtBearer, jwtFor(t, keys[0], "RS256", with("iss", "other@x.iam.gserviceaccount.com")), "invalid_grant"},
		{"another audience", jwtBearer, jwtFor(t, keys[0], "RS256", with("aud", "https://oauth2.googleapis.com/token")), "invalid_grant"},
		{"expired", jwtBearer, jwtFor(t, keys[0], "RS256", with("exp", now-10)), "invalid_grant"},
		{"too long", jwtBearer, jwtFor(t, keys[0], "RS256", with("exp", now+7200)), "invalid_grant"},
		{"no scope", jwtBearer, jwtFor(t, keys[0], "RS256", with("scope", "")), "invalid_scope"},
		{"not RS256", jwtBearer, jwtFor(t, keys[0], "RS512", good()), "invalid_grant"},
		{"another grant", "client_credentials", jwtFor(t, keys[0], "RS256", good()), "unsupported_grant_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := http.PostForm(v.TokenURL(), url.Values{"grant_type": {c.grant}, "assertion": {c.assertion}})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			json.NewDecoder(resp.Body).Decode(&body)
			if c.wantError == "" {
				if tok, _ := body["access_token"].(string); resp.StatusCode != 200 || !strings.HasPrefix(tok, "ya29.") || body["token_type"] != "Bearer" {
					t.Fatalf("%d %v", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != 400 || body["error"] != c.wantError {
				t.Fatalf("%d %v, want 400 %s", resp.StatusCode, body, c.wantError)
			}
		})
	}
}
