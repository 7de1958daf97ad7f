package main

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"time"

	"github.com/gengate/gengate/internal/engine/comfyui"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/google"
	"github.com/gengate/gengate/internal/engine/openai"
	"github.com/gengate/gengate/internal/engine/replicate"
	"github.com/gengate/gengate/internal/httpapi"
)

// AccountFlags are serve's account-area settings.
type AccountFlags struct {
	OpenSignup       bool
	SignupCredits    int
	SignInPerAccount int
	SignInPerAddress int
	// SignInMemory bounds the sign-in limiter's memory, in bytes.
	SignInMemory int
	// PasswordHashes caps the password hashes computed at once.
	PasswordHashes int
	// FirstEmail is the email of the first-start account's operator.
	FirstEmail string
}

func (a *AccountFlags) add(f *flags) error {
	f.str(&a.FirstEmail, "first-email", "admin@localhost", "email of the operator member of the first-start account")
	return errors.Join(
		f.boolean(&a.OpenSignup, "open-signup", "let anyone create an account (POST /api/v1/auth/signup)"),
		f.integer(&a.SignupCredits, "signup-credits", 0, "credits of an account created by open sign-up"),
		f.integer(&a.SignInPerAccount, "signin-limit-account", httpapi.DefaultSignInPerAccount,
			"sign-in attempts per account email per 15 minutes (0: no limit)"),
		f.integer(&a.SignInPerAddress, "signin-limit-address", httpapi.DefaultSignInPerAddress,
			"sign-in, link and sign-up attempts per client address per 15 minutes (0: no limit)"),
		f.integer(&a.SignInMemory, "signin-limit-memory", httpapi.DefaultSignInMemory,
			"memory the sign-in limits' counters may take, in bytes (256 bytes per email or address counted); when full of counters still counting, attempts needing a new one get 429"),
		f.integer(&a.PasswordHashes, "password-hashes", runtime.NumCPU(),
			"password hashes (19 MiB of memory each) computed at once; more sign-ins wait"),
	)
}

func (a *AccountFlags) validate() error {
	switch {
	case a.SignupCredits < 0:
		return errors.New("--signup-credits must be ≥ 0")
	case a.SignInPerAccount < 0 || a.SignInPerAddress < 0:
		return errors.New("--signin-limit-account and --signin-limit-address must be ≥ 0")
	case a.SignInMemory < 64<<10:
		return errors.New("--signin-limit-memory must be ≥ 65536")
	case a.PasswordHashes < 1:
		return errors.New("--password-hashes must be ≥ 1")
	}
	return nil
}

// httpConfig is the HTTP layer's view of the flags; probe tells whether a
// provider answers.
func (a *AccountFlags) httpConfig(probe func(context.Context, string) error) httpapi.AccountsConfig {
	c := httpapi.AccountsConfig{OpenSignup: a.OpenSignup, SignupCredits: a.SignupCredits,
		SignInPerAccount: a.SignInPerAccount, SignInPerAddress: a.SignInPerAddress, SignInMemory: int64(a.SignInMemory), PasswordWork: a.PasswordHashes, Probe: probe}
	if c.SignInPerAccount == 0 {
		c.SignInPerAccount = -1 // the flag's 0 means no limit
	}
	if c.SignInPerAddress == 0 {
		c.SignInPerAddress = -1
	}
	return c
}

// providerBaseURL is the base URL a provider's engine talks to.
func providerBaseURL(p providerConfig) string {
	if p.BaseURL != "" {
		return p.BaseURL
	}
	if p.Type == "vertex" {
		return google.VertexBaseURL(p.Location)
	}
	return map[string]string{"comfyui": comfyui.DefaultBaseURL, "fal": fal.DefaultBaseURL, "google": google.DefaultBaseURL,
		"openai": openai.DefaultBaseURL, "replicate": replicate.DefaultBaseURL}[p.Type]
}

// reachability returns the probe of the operator's engines page: the
// engine's own CheckHealth (a cheap authenticated question) where it has
// one, else a GET on the provider's base URL without credentials, where
// any HTTP answer, even 401 or 404, means the provider answers.
func reachability(engs *engines) func(context.Context, string) error {
	client := &http.Client{Timeout: 3 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(ctx context.Context, name string) error {
		if hc, ok := engs.All[name].(healthChecker); ok {
			return hc.CheckHealth(ctx)
		}
		u := engs.BaseURLs[name]
		if u == "" {
			return errors.New("no base URL")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}
