package httpapi

// accountRoutes adds the account area's endpoints (docs/api.md, "Account
// area") to the mux.
func (a *api) accountRoutes(mux gatedMux) {
	// The sign-in endpoints take JSON from this server's own pages (or
	// from clients that are not browsers) only: crossorigin.go.
	mux.Handle("POST /api/v1/auth/signin", a.sameOrigin(a.jsonOnly(a.handleSignIn())))
	mux.Handle("POST /api/v1/auth/link", a.sameOrigin(a.jsonOnly(a.handleLink())))
	mux.Handle("POST /api/v1/auth/signup", a.sameOrigin(a.jsonOnly(a.handleSignUp())))
	mux.Handle("POST /api/v1/auth/signout", a.sameOrigin(a.handleSignOut()))
	mux.Handle("POST /api/v1/auth/signout-all", a.sameOrigin(a.handleSignOutAll()))
	mux.Handle("GET /api/v1/auth/session", a.handleSession())
	mux.Handle("GET /api/v1/auth/config", a.handleAuthConfig())

	mux.Handle("GET /api/v1/account", a.auth(a.handleAccount()))
	mux.Handle("GET /api/v1/account/ledger", a.auth(a.handleLedger()))
	mux.Handle("GET /api/v1/account/usage", a.auth(a.handleUsage()))
	mux.Handle("GET /api/v1/account/usage/daily", a.auth(a.handleDailyUsage()))
	mux.Handle("POST /api/v1/account/redeem", a.auth(a.handleRedeem()))
	mux.Handle("POST /api/v1/account/checkout", a.auth(a.handleCheckout()))
	mux.Handle("POST /api/v1/stripe/webhook", a.handlePaymentWebhook())
	mux.Handle("GET /api/generation/jobs", a.auth(a.handleTasks()))
	mux.Handle("GET /api/v1/keys", a.auth(a.handleKeys()))
	mux.Handle("POST /api/v1/keys", a.auth(a.handleCreateKey()))
	mux.Handle("PATCH /api/v1/keys/{keyId}", a.auth(a.handleUpdateKey()))
	mux.Handle("DELETE /api/v1/keys/{keyId}", a.auth(a.handleRevokeKey()))
	mux.Handle("POST /api/v1/quote", a.auth(a.handleQuote()))
	mux.Handle("GET /api/v1/quote", a.auth(a.handleQuote()))

	a.adminRoutes(mux)
}
