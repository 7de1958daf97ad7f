package httpapi

// Every operation of the OpenAPI document carries an operationId, the name
// code generators give the method that calls it (oapi-codegen's
// client.Generate, openapi-typescript's operations["generate"]). The names
// are chosen here, once, so a generated client keeps them from release to
// release; an operation missing from the table still gets a unique name made
// from its method and path, and TestOpenAPIDocumentsEveryRoute asks for one
// in the table.

import (
	"strconv"
	"strings"
	"unicode"
)

// operationIDs names each operation, keyed by "METHOD /path".
var operationIDs = map[string]string{
	"POST /api/v1/generate":                         "generate",
	"GET /api/v1/models":                            "listModels",
	"GET /api/v1/quote":                             "quoteQuery",
	"POST /api/v1/quote":                            "quote",
	"GET /api/generation/jobs":                      "listJobs",
	"GET /api/generation/jobs/{id}":                 "getJob",
	"POST /api/generation/jobs/{id}":                "advanceJob",
	"POST /api/generation/jobs/{id}/cancel":         "cancelJob",
	"POST /api/v1/files":                            "uploadFile",
	"GET /files/{name}":                             "getFile",
	"GET /files/in/{task}/{name}":                   "getTaskInput",
	"POST /v1/images/generations":                   "createImage",
	"POST /v1/images/edits":                         "createImageEdit",
	"GET /api/v1/webhooks/secret":                   "getWebhookSecret",
	"POST /api/v1/webhooks/secret/rotate":           "rotateWebhookSecret",
	"GET /api/v1/webhooks":                          "listWebhookEndpoints",
	"POST /api/v1/webhooks":                         "createWebhookEndpoint",
	"DELETE /api/v1/webhooks/{id}":                  "deleteWebhookEndpoint",
	"POST /api/v1/webhooks/{id}/rotate":             "rotateWebhookEndpointSecret",
	"GET /api/v1/webhooks/{id}/attempts":            "listWebhookAttempts",
	"POST /api/v1/webhooks/events/{eventId}/replay": "replayWebhookEvent",
	"GET /api/v1/openapi.json":                      "getOpenAPI",
	"GET /docs/api":                                 "getAPIReference",
	"GET /healthz":                                  "health",
	"GET /readyz":                                   "ready",
	"GET /metrics":                                  "metrics",
	"POST /api/v1/auth/signin":                      "signIn",
	"POST /api/v1/auth/link":                        "signInWithLink",
	"POST /api/v1/auth/signup":                      "signUp",
	"POST /api/v1/auth/signout":                     "signOut",
	"POST /api/v1/auth/signout-all":                 "signOutEverywhere",
	"GET /api/v1/auth/session":                      "getSession",
	"GET /api/v1/auth/config":                       "getAuthConfig",
	"GET /api/v1/account":                           "getAccount",
	"PATCH /api/v1/account":                         "renameAccount",
	"GET /api/v1/account/sessions":                  "listSessions",
	"DELETE /api/v1/account/sessions/{id}":          "endSession",
	"GET /api/v1/account/ledger":                    "listLedger",
	"POST /api/v1/account/password":                 "changePassword",
	"GET /api/v1/account/usage":                     "getUsage",
	"GET /api/v1/account/usage/daily":               "getDailyUsage",
	"POST /api/v1/account/redeem":                   "redeemCode",
	"GET /api/v1/keys":                              "listKeys",
	"POST /api/v1/keys":                             "createKey",
	"PATCH /api/v1/keys/{keyId}":                    "updateKey",
	"DELETE /api/v1/keys/{keyId}":                   "revokeKey",
	"GET /api/v1/admin/accounts":                    "adminListAccounts",
	"POST /api/v1/admin/accounts":                   "adminCreateAccount",
	"GET /api/v1/admin/accounts/{id}":               "adminGetAccount",
	"GET /api/v1/admin/accounts/{id}/tasks":         "adminListAccountJobs",
	"GET /api/v1/admin/accounts/{id}/ledger":        "adminListAccountLedger",
	"POST /api/v1/admin/accounts/{id}/credits":      "adminGrantCredits",
	"POST /api/v1/admin/accounts/{id}/link":         "adminCreateSignInLink",
	"POST /api/v1/admin/codes":                      "adminCreateCodes",
	"GET /api/v1/admin/review":                      "adminListReview",
	"POST /api/v1/admin/review/{jobId}":             "adminSettleReview",
	"GET /api/v1/admin/engines":                     "adminListEngines",
	"POST /api/v1/account/checkout":                 "createCheckout",
	"POST /api/v1/stripe/webhook":                   "stripeWebhook",
	"GET /api/v1/admin/purchases":                   "adminListPurchases",
}

var docMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// withOperationIDs gives every operation of paths its operationId: the
// table's name, or one made from the method and the path, unique in the
// document.
func withOperationIDs(paths obj) {
	used := map[string]bool{}
	for _, p := range sortedKeys(paths) {
		item := paths[p].(obj)
		for _, m := range docMethods {
			o, ok := item[m].(obj)
			if !ok {
				continue
			}
			id := operationIDs[strings.ToUpper(m)+" "+p]
			if id == "" || used[id] {
				id = derivedOperationID(m, p)
			}
			base := id
			for n := 2; used[id]; n++ {
				id = base + strconv.Itoa(n)
			}
			used[id] = true
			o["operationId"] = id
		}
	}
}

// derivedOperationID is method and path in lower camel case:
// "post", "/api/v1/things/{id}" → "postApiV1ThingsId".
func derivedOperationID(method, path string) string {
	var b strings.Builder
	b.WriteString(method)
	upper := true
	for _, r := range path {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// webhookOperationID names an event's webhook operation:
// "generation.needs_review" → "generationNeedsReview".
func webhookOperationID(eventType string) string {
	id := derivedOperationID("", eventType)
	return strings.ToLower(id[:1]) + id[1:]
}
