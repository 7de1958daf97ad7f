package httpapi

// accountPaths are sign-in, the account area, keys and card top-ups.
func accountPaths() obj {
	session := object(obj{"member": object(obj{"id": str(), "email": str(), "role": str()}, "id", "email", "role"), "accountId": str(), "accountName": str(), "operator": obj{"type": "boolean"}, "csrfToken": str()})
	memberSession := object(obj{"id": str(), "createdAt": str(), "lastUsedAt": obj{"type": "string", "description": "to within an hour"},
		"expiresAt": str(), "userAgent": obj{"type": "string", "description": "the browser's User-Agent at sign-in, at most 256 bytes; empty when unknown"},
		"browser": obj{"type": "string", "description": "the User-Agent in short (\"Firefox 128 on Linux\"); empty when unknown"},
		"current": obj{"type": "boolean", "description": "the session making this request"}},
		"id", "createdAt", "lastUsedAt", "expiresAt", "userAgent", "browser", "current")
	spendLimit := obj{"type": []string{"integer", "null"}, "minimum": 1, "description": "credits per UTC day; null for none"}
	return obj{
		// The account area (docs/api.md has its members in full).
		"/api/v1/auth/signin":      obj{"post": op("Sign in with email and password", false, withStore(smallBody(signInDoor(obj{"200": response("the session", session, "Set-Cookie"), "400": problem("INVALID_REQUEST"), "401": problem("INVALID_CREDENTIALS"), "429": response("RATE_LIMITED", ref("Problem"), "Retry-After")}, true))))},
		"/api/v1/auth/link":        obj{"post": op("Use a one-time link", false, withStore(smallBody(signInDoor(obj{"200": response("the session", session, "Set-Cookie"), "400": problem("INVALID_REQUEST"), "401": problem("INVALID_LINK")}, true))))},
		"/api/v1/auth/signup":      obj{"post": op("Open sign-up", false, withStore(smallBody(signInDoor(obj{"201": response("the session", session, "Set-Cookie"), "400": problem("INVALID_REQUEST"), "403": problem("SIGNUP_CLOSED, or CROSS_ORIGIN_REQUEST: sent by another site's page"), "409": problem("EMAIL_TAKEN")}, true))))},
		"/api/v1/auth/signout":     obj{"post": op("Sign out", false, withStore(obj{"204": obj{"description": "signed out"}, "403": problem("CSRF_TOKEN_INVALID, or CROSS_ORIGIN_REQUEST: sent by another site's page")}))},
		"/api/v1/auth/signout-all": obj{"post": op("Sign out everywhere: end every session of the signed-in member, this one too", false, withStore(obj{"204": obj{"description": "every session of the member ended; the cookie cleared"}, "401": problem("UNAUTHORIZED: no session"), "403": problem("CSRF_TOKEN_INVALID, or CROSS_ORIGIN_REQUEST: sent by another site's page")}))},
		"/api/v1/auth/session":     obj{"get": op("The current session", false, withStore(obj{"200": response("the session", session), "401": problem("UNAUTHORIZED")}))},
		"/api/v1/auth/config": obj{"get": op("Sign-up and top-up configuration", false, obj{"200": response("config", object(obj{"openSignup": obj{"type": "boolean"},
			"topUp": object(obj{"currency": str(), "unitAmount": integer(), "minCredits": integer(), "maxCredits": integer()},
				"currency", "unitAmount", "minCredits", "maxCredits")}, "openSignup"))})},
		"/api/v1/account/password": obj{"post": op("Change the signed-in member's password; the member's other sessions end", true, smallBody(obj{"204": obj{"description": "the password changed; every other session of the member ended"},
			"400": problem("INVALID_REQUEST: the new password breaks the rules"), "401": problem("INVALID_CREDENTIALS: the current password is wrong"), "403": problem("FORBIDDEN: not a member's session (an API key)"),
			"429": response("RATE_LIMITED", ref("Problem"), "Retry-After")}), jsonBody(closed(obj{"currentPassword": str(), "password": str()}, "currentPassword", "password")))},
		"/api/v1/account": obj{
			"get": op("The caller's account", true, obj{"200": response("the account", ref("Account"))}),
			"patch": op("Rename the account: its owner or an operator, signed in with a session", true, smallBody(obj{"200": response("the account", ref("Account")),
				"400": problem("INVALID_REQUEST on name: empty once trimmed, over 200 bytes, or not one line of text"),
				"403": problem("FORBIDDEN: an API key, or a member who does not manage the account")}),
				jsonBody(closed(obj{"name": obj{"type": "string", "description": "trimmed; 1 to 200 bytes, one line"}}, "name"))),
		},
		"/api/v1/account/sessions": obj{"get": op("The signed-in member's own sessions, newest first", true, obj{
			"200": response("a page of the member's unexpired sessions", page(memberSession)),
			"400": problem("INVALID_REQUEST naming the bad parameter"), "403": problem("FORBIDDEN: an API key (sessions belong to members)")},
			queryParams("limit", "cursor"))},
		"/api/v1/account/sessions/{id}": obj{"delete": op("End one of the signed-in member's own sessions (the current one too: that signs out)", true, obj{
			"204": obj{"description": "the session ended; ending the current one also clears its cookie"},
			"403": problem("FORBIDDEN: an API key (sessions belong to members)"),
			"404": problem("NOT_FOUND: not one of the member's live sessions (another member's, unknown or expired)")}, pathParam("id"))},
		"/api/v1/account/ledger": obj{"get": op("The account's ledger, newest first", true,
			obj{"200": withCSV(response("a page of ledger entries; with format=csv the whole ledger as CSV, streamed", ref("LedgerPage"))),
				"400": problem("INVALID_REQUEST naming the bad parameter")},
			queryParams("format", "limit", "cursor"))},
		"/api/v1/account/usage/daily": obj{"get": op("Net credits per UTC day, model and key", true, obj{
			"200": withCSV(response("usage per day, oldest first; with format=csv as CSV", object(obj{"data": arr(object(obj{
				"day": str(), "modelId": str(), "keyId": str(), "tasks": integer(), "credits": integer()}, "day", "modelId", "tasks", "credits"))}, "data"))),
			"400": problem("INVALID_REQUEST naming days or format")}, queryParams("days", "format"))},
		"/api/v1/account/checkout": obj{"post": op("Buy credits by card: a Stripe Checkout Session", true, smallBody(obj{
			"201": response("the session and its Stripe-hosted page", object(obj{"id": str(), "url": str()}, "id", "url")),
			"400": problem("INVALID_REQUEST naming credits"), "404": problem("NOT_FOUND: card top-ups are not configured")}),
			jsonBody(closed(obj{"credits": integer()}, "credits")))},
		"/api/v1/stripe/webhook": obj{"post": op("Stripe's signed events (Stripe-Signature)", false, withStore(obj{
			"200": response("applied, or nothing to do", object(obj{"received": obj{"const": true}, "id": str()}, "received")),
			"400": problem("SIGNATURE_INVALID: a wrong or stale signature; nothing changed"),
			"404": problem("NOT_FOUND: card top-ups are not configured"), "413": problem("PAYLOAD_TOO_LARGE: over 1 MiB")}),
			jsonBody(obj{"type": "object"}))},
		"/api/v1/account/usage": obj{"get": op("Net credits per model", true, obj{"200": response("usage", object(obj{"data": arr(object(obj{
			"modelId": str(), "tasks": integer(), "credits": integer()}, "modelId", "tasks", "credits"))}, "data")), "400": problem("INVALID_REQUEST")}, queryParams("days"))},
		"/api/v1/account/redeem": obj{"post": op("Redeem a code for credits", true, smallBody(obj{
			"200": response("the balance after", object(obj{"remainingCredits": integer()}, "remainingCredits")),
			"400": problem("INVALID_REQUEST"), "404": problem("CODE_UNKNOWN"), "409": problem("CODE_USED"), "410": problem("CODE_EXPIRED"),
			"429": response("RATE_LIMITED: too many attempts for this account", ref("Problem"), "Retry-After")}),
			jsonBody(closed(obj{"code": str()}, "code")))},
		"/api/v1/keys": obj{
			"get": op("The account's API keys, a page at a time", true, obj{"200": response("keys, newest first, revoked ones too", page(ref("Key"))), "400": problem("INVALID_REQUEST naming the bad parameter")},
				queryParams("limit", "cursor")),
			"post": op("Create an API key (the secret is shown once); a key with a spend limit makes keys limited to at most its own, a test key only test keys, and no key operator keys", true, smallBody(obj{"201": response("the key with its secret", ref("KeyCreated")), "400": problem("INVALID_REQUEST"),
				"403": problem("KEY_WIDER_THAN_CALLER: a spendLimit above the calling key's own, or a live key asked by a test key"), "409": problem("KEY_LIMIT_REACHED: the account has --max-keys active keys")}),
				jsonBody(closed(obj{"name": str(), "spendLimit": spendLimit,
					"test": obj{"type": "boolean", "description": "a test key (gg_test_): generations on the sandbox, nothing charged"}}, "name"))),
		},
		"/api/v1/keys/{keyId}": obj{
			"patch": op("Rename a key or set its daily spend limit; a key with a spend limit cannot lift a limit or raise one above its own", true, smallBody(obj{"200": response("the key", ref("Key")), "400": problem("INVALID_REQUEST"), "403": problem("KEY_WIDER_THAN_CALLER"), "404": problem("NOT_FOUND")}), pathParam("keyId"),
				jsonBody(closed(obj{"name": str(), "spendLimit": spendLimit}))),
			"delete": op("Revoke a key", true, obj{"204": obj{"description": "revoked"}, "404": problem("NOT_FOUND")}, pathParam("keyId")),
		},
	}
}
