package httpapi

// adminPaths are the operators' endpoints.
func adminPaths() obj {
	return obj{
		"/api/v1/admin/purchases": obj{"get": op("Operator: card top-ups", true, obj{"200": response("purchases, newest first",
			object(obj{"data": arr(object(obj{"sessionId": str(), "accountId": str(), "credits": integer(), "paymentIntent": str(),
				"amountTotal": integer(), "currency": str(), "createdAt": str(), "refundedCredits": integer(), "takenBack": integer()},
				"sessionId", "accountId", "credits", "createdAt", "refundedCredits", "takenBack"))}, "data")),
			"400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN")}, queryParams("unrecovered", "limit"))},
		"/api/v1/admin/accounts": obj{
			"get": op("Operator: accounts", true, obj{"200": response("accounts", page(ref("Account"))), "403": problem("FORBIDDEN")}, queryParams("q", "limit", "cursor")),
			"post": op("Operator: create an account", true, smallBody(obj{"201": response("the account and its set-up link", object(obj{"account": ref("Account"), "setupLink": str()}, "account", "setupLink")),
				"400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "409": problem("EMAIL_TAKEN")}),
				jsonBody(closed(obj{"email": str(), "name": str(), "credits": integer(), "operator": obj{"type": "boolean"}}, "email", "credits"))),
		},
		"/api/v1/admin/codes": obj{"post": op("Operator: make redemption codes (shown once)", true, smallBody(obj{
			"201": response("the codes", object(obj{"codes": arr(str()), "credits": integer(), "expiresAt": str()}, "codes", "credits")),
			"400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN")}),
			jsonBody(closed(obj{"credits": integer(), "count": integer(), "expiresAt": str()}, "credits")))},
		"/api/v1/admin/accounts/{id}": obj{"get": op("Operator: one account with a page of its keys (limit, cursor)", true, obj{"200": response("the account with its keys", ref("AccountWithKeys")), "400": problem("INVALID_REQUEST naming the bad parameter"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")}, pathAndQuery("id", "limit", "cursor"))},
		"/api/v1/admin/accounts/{id}/tasks": obj{"get": op("Operator: one account's tasks, newest first (the filters of the account's own list)", true, obj{
			"200": withCSV(response("a page of task records; with format=csv every matching task as CSV, streamed", page(ref("TaskRecord")))),
			"400": problem("INVALID_REQUEST naming the bad parameter"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")},
			pathAndQuery("id", "status", "modelId", "type", "test", "format", "limit", "cursor"))},
		"/api/v1/admin/accounts/{id}/ledger": obj{"get": op("Operator: one account's ledger, newest first", true, obj{
			"200": withCSV(response("a page of ledger entries; with format=csv the whole ledger as CSV, streamed", ref("LedgerPage"))),
			"400": problem("INVALID_REQUEST naming the bad parameter"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")},
			pathAndQuery("id", "format", "limit", "cursor"))},
		"/api/v1/admin/accounts/{id}/credits": obj{"post": op("Operator: grant or remove credits", true, smallBody(obj{"200": response("the balance", object(obj{"remainingCredits": integer()}, "remainingCredits")),
			"402": problem("INSUFFICIENT_CREDITS: removing more than the balance"), "400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")}),
			pathParam("id"), jsonBody(closed(obj{"credits": obj{"type": "integer", "not": obj{"const": 0}, "description": "negative removes credits"},
				"note": obj{"type": "string", "maxLength": 500}}, "credits")))},
		"/api/v1/admin/accounts/{id}/link": obj{"post": op("Operator: a sign-in link", true, smallBody(obj{"200": response("the link", object(obj{"link": str()}, "link")), "400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")}),
			pathParam("id"), jsonBody(closed(obj{"email": str()}, "email")))},
		"/api/v1/admin/review": obj{"get": op("Operator: tasks in review", true, obj{"200": response("tasks in review, oldest first", page(ref("ReviewTask"))), "403": problem("FORBIDDEN")}, queryParams("limit", "cursor"))},
		"/api/v1/admin/review/{jobId}": obj{"post": op("Operator: settle a review", true, smallBody(obj{"200": response("the task", ref("TaskRecord")), "400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND"), "409": problem("CONFLICT")}), pathParam("jobId"),
			jsonBody(closed(obj{"action": obj{"type": "string", "enum": []string{"deliver", "refund"}}}, "action")))},
		"/api/v1/admin/engines": obj{"get": op("Operator: engines and their routes", true, obj{"200": response("engines", object(obj{"data": arr(ref("Engine")), "replication": ref("Replication")}, "data")), "403": problem("FORBIDDEN")})},
	}
}
