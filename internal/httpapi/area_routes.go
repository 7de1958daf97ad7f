package httpapi

// accountRoutes adds the account area's endpoints (docs/api.md, "Account
// area") to the mux.
func (a *api) accountRoutes(mux gatedMux) {
	// The sign-in endpoints take JSON from this server's own pages (or
	// from clients that are not browsers) only: crossorigin.go.
	mux.Handle("POST /api/v1/auth/signin", bodyJSON(a.cfg.MaxJSONBody), a.sameOrigin(a.jsonOnly(a.handleSignIn())))
	mux.Handle("POST /api/v1/auth/link", bodyJSON(a.cfg.MaxJSONBody), a.sameOrigin(a.jsonOnly(a.handleLink())))
	mux.Handle("POST /api/v1/auth/signup", bodyJSON(a.cfg.MaxJSONBody), a.sameOrigin(a.jsonOnly(a.handleSignUp())))
	mux.Handle("POST /api/v1/auth/signout", bodyNone, a.sameOrigin(a.handleSignOut()))
	mux.Handle("POST /api/v1/auth/signout-all", bodyNone, a.sameOrigin(a.handleSignOutAll()))
	mux.Handle("GET /api/v1/auth/session", bodyNone, a.handleSession())
	mux.Handle("GET /api/v1/auth/config", bodyNone, a.handleAuthConfig())

	mux.Handle("GET /api/v1/account", bodyNone, a.auth(a.handleAccount()))
	mux.Handle("PATCH /api/v1/account", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleRenameAccount()))
	mux.Handle("GET /api/v1/account/sessions", bodyNone, a.auth(a.handleSessions()))
	mux.Handle("DELETE /api/v1/account/sessions/{id}", bodyNone, a.auth(a.handleEndSession()))
	mux.Handle("GET /api/v1/account/ledger", bodyNone, a.auth(a.handleLedger()))
	mux.Handle("POST /api/v1/account/password", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleChangePassword()))
	mux.Handle("GET /api/v1/account/usage", bodyNone, a.auth(a.handleUsage()))
	mux.Handle("GET /api/v1/account/usage/daily", bodyNone, a.auth(a.handleDailyUsage()))
	mux.Handle("POST /api/v1/account/redeem", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleRedeem()))
	mux.Handle("POST /api/v1/account/checkout", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleCheckout()))
	mux.Handle("POST /api/v1/stripe/webhook", bodyJSON(MaxPaymentEvent), a.handlePaymentWebhook())
	mux.Handle("GET /api/generation/jobs", bodyNone, a.auth(a.handleTasks()))
	mux.Handle("GET /api/v1/keys", bodyNone, a.auth(a.handleKeys()))
	mux.Handle("POST /api/v1/keys", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleCreateKey()))
	mux.Handle("PATCH /api/v1/keys/{keyId}", bodyJSON(a.cfg.MaxJSONBody), a.auth(a.handleUpdateKey()))
	mux.Handle("DELETE /api/v1/keys/{keyId}", bodyNone, a.auth(a.handleRevokeKey()))
	mux.Handle("POST /api/v1/quote", bodyStream(a.cfg.MaxBody), a.auth(a.handleQuote()))
	mux.Handle("GET /api/v1/quote", bodyNone, a.auth(a.handleQuote()))

	a.adminRoutes(mux)
}
