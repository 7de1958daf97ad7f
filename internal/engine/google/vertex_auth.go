package google

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/oauth2"
	googleauth "golang.org/x/oauth2/google"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// Vertex AI credentials.
//
// Vertex AI takes an OAuth 2 access token (Authorization: Bearer), never
// an API key here. The token comes from golang.org/x/oauth2/google: with
// a service-account JSON file (CredentialsFile), a JWT signed RS256 with
// the file's private key is exchanged at the file's token_uri (the
// JWT bearer grant, RFC 7523) for an access token of scope cloud-platform;
// without one, Application Default Credentials are looked up
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's well-known file, the GCE
// metadata server) on first use. Tokens are cached until 10 seconds
// before they expire (oauth2.ReuseTokenSource), then fetched again; a
// token Vertex AI answers 401 to is dropped, so the next call fetches a
// new one.
//
// The file is read once, at start; its contents (the private key) are
// never logged, never put in an error, and never sent anywhere but as a
// signature. Token errors name the token endpoint's answer, not the file.

// cloudPlatformScope is the OAuth scope Vertex AI requires.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// tokenTimeout bounds one token fetch.
const tokenTimeout = 30 * time.Second

// tokens hands out access tokens: from a service account file, or from
// Application Default Credentials found on first use.
type tokens struct {
	ctx context.Context // carries the HTTP client for token fetches
	// build makes a token source with an empty cache.
	build func() (oauth2.TokenSource, error)

	mu  sync.Mutex
	src oauth2.TokenSource // nil until first use, and after drop
}

// newTokens reads the credentials file (a service account key), or
// prepares an ADC lookup when file is "". hc makes the token requests.
func newTokens(file string, hc *http.Client) (*tokens, error) {
	tc := *hc
	tc.Timeout = tokenTimeout
	t := &tokens{ctx: context.WithValue(context.Background(), oauth2.HTTPClient, &tc)}
	if file == "" {
		t.build = func() (oauth2.TokenSource, error) {
			creds, err := googleauth.FindDefaultCredentials(t.ctx, cloudPlatformScope)
			if err != nil {
				return nil, err
			}
			return creds.TokenSource, nil
		}
		return t, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	// Only a service account key (JWTConfigFromJSON takes no other type):
	// other credential types (external accounts) make the library fetch
	// URLs the file names.
	conf, err := googleauth.JWTConfigFromJSON(data, cloudPlatformScope)
	if err != nil {
		return nil, errors.New("credentials file: not a service account key (type \"service_account\" with client_email, private_key and token_uri)")
	}
	t.build = func() (oauth2.TokenSource, error) { return conf.TokenSource(t.ctx), nil }
	return t, nil
}

// source returns the token source, made (for ADC: looked up) on first use
// and after drop.
func (t *tokens) source() (oauth2.TokenSource, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.src != nil {
		return t.src, nil
	}
	src, err := t.build()
	if err != nil {
		return nil, err
	}
	t.src = src
	return src, nil
}

// drop forgets the cached token, after Vertex AI refused it (401: revoked,
// or expired earlier than it said): the next call fetches a new one.
func (t *tokens) drop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.src = nil
}

// token returns a valid access token. Its errors are UpstreamErrors:
// Refused (at submit) when the token endpoint refuses the credentials or
// cannot be reached, Busy when it is busy (429, 5xx); Busy for polls
// (submit false), as for every poll failure.
func (t *tokens) token(ctx context.Context, submit bool) (string, error) {
	type result struct {
		tok *oauth2.Token
		err error
	}
	ch := make(chan result, 1)
	go func() {
		src, err := t.source()
		if err != nil {
			ch <- result{err: err}
			return
		}
		tok, err := src.Token()
		ch <- result{tok, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	if r.err == nil && (r.tok == nil || r.tok.AccessToken == "") {
		r.err = errors.New("the token endpoint answered no access token")
	}
	if r.err == nil {
		return r.tok.AccessToken, nil
	}
	e := &gengate.UpstreamError{Kind: gengate.Refused, Code: gengate.CodeUpstream}
	var re *oauth2.RetrieveError
	switch {
	case errors.As(r.err, &re) && re.Response != nil:
		e.Status = re.Response.StatusCode
		msg := re.ErrorCode
		if re.ErrorDescription != "" {
			msg += ": " + re.ErrorDescription
		}
		if msg == "" {
			msg = upstream.Message(re.Body)
		}
		e.Message = fmt.Sprintf("vertex: the token endpoint answered %d, the credentials were refused: %s", e.Status, upstream.Clean(msg))
		if e.Status == http.StatusTooManyRequests || e.Status >= 500 {
			e.Kind = gengate.Busy
			e.Message = fmt.Sprintf("vertex: the token endpoint answered %d: %s", e.Status, upstream.Clean(msg))
		}
	default:
		e.Message = "vertex: no access token: " + upstream.Clean(rootMessage(r.err))
	}
	if !submit {
		e.Kind = gengate.Busy
	}
	return "", e
}

func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
