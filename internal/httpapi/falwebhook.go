package httpapi

// fal queue webhooks (docs/fal.md, "Webhooks"). A submit with
// ?fal_webhook= marks its task's webhook as a fal request's
// (gengate.FalWebhookEvents), and its one event, gengate.FalCompleted, is
// sent as fal sends a queue webhook, so that a handler written for fal
// works unchanged: the body {"request_id", "gateway_request_id",
// "status": "OK" or "ERROR", "payload", "error"} (fal's webhook docs,
// fal-js's WebHookResponse), and the headers X-Fal-Webhook-Request-Id,
// -User-Id, -Timestamp and -Signature, the hex ED25519 signature of the
// request id, the user id, the timestamp and the hex SHA-256 of the body,
// one a line. gengate cannot sign as fal: it signs with the install's
// signing key (gengate.SigningKey) and publishes the public keys as a
// JWKS at falJWKSPath, which is all a receiver changes.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gengate/gengate"
)

// falJWKSPath publishes the public keys that verify a fal webhook's
// signature, where fal's receivers fetch fal's
// (https://rest.alpha.fal.ai/.well-known/jwks.json).
const falJWKSPath = "/fal/.well-known/jwks.json"

// falJWKSMaxAge is how long a receiver may cache the key set (fal's docs
// let it cache fal's for up to a day; a key re-issued after a lost
// server key is learnt within this).
const falJWKSMaxAge = time.Hour

// The headers of a fal webhook.
const (
	falHookRequestID = "X-Fal-Webhook-Request-Id"
	falHookUserID    = "X-Fal-Webhook-User-Id"
	falHookTimestamp = "X-Fal-Webhook-Timestamp"
	falHookSignature = "X-Fal-Webhook-Signature"
)

// falWebhookBody is a finished task as fal's queue webhook: status OK with
// the result GET .../requests/{id} answers as its payload, or status
// ERROR with that read's error body as its payload and, as fal words it,
// "Invalid status code: <the read's status>" as its error. Both ids are
// the task's: gengate keeps one id however often it tries upstream.
func (a *api) falWebhookBody(r *http.Request, t *gengate.Task) map[string]any {
	body := map[string]any{"request_id": t.ID, "gateway_request_id": t.ID}
	if t.Status == gengate.StatusSucceeded {
		body["status"], body["payload"] = "OK", a.falOutput(r, t)
		return body
	}
	fe := a.falFailure(t)
	body["status"], body["error"], body["payload"] = "ERROR", fmt.Sprintf("Invalid status code: %d", fe.status), fe.body()
	return body
}

// isFalHook reports whether e is a fal request's event to its own
// webhookUrl (the account's endpoints get gengate's events).
func isFalHook(e *gengate.WebhookEvent) bool {
	return e.EndpointID == "" && e.Type == gengate.FalCompleted
}

// WebhookSigner signs each event for the delivery loop
// (webhook.Config.Sign): a fal request's as fal signs a webhook, with the
// install's signing key; any other is left to the loop (nil headers:
// Standard Webhooks' signature with the target's secret).
func WebhookSigner(svc *gengate.Service) func(ctx context.Context, e *gengate.WebhookEvent, body []byte, at time.Time) (http.Header, error) {
	return func(ctx context.Context, e *gengate.WebhookEvent, body []byte, at time.Time) (http.Header, error) {
		if !isFalHook(e) {
			return nil, nil
		}
		ts := strconv.FormatInt(at.Unix(), 10)
		sum := sha256.Sum256(body)
		msg := e.TaskID + "\n" + e.AccountID + "\n" + ts + "\n" + hex.EncodeToString(sum[:])
		sig, _, err := svc.SignWithKey(ctx, []byte(msg))
		if err != nil {
			return nil, err
		}
		h := http.Header{}
		h.Set(falHookRequestID, e.TaskID)
		h.Set(falHookUserID, e.AccountID)
		h.Set(falHookTimestamp, ts)
		h.Set(falHookSignature, hex.EncodeToString(sig))
		return h, nil
	}
}

// handleFalJWKS is GET /fal/.well-known/jwks.json: the install's signing
// keys as a JSON Web Key Set, in the form of fal's own ({"keys": [{"kty":
// "OKP", "crv": "Ed25519", "x"}]}, each with its kid), made on first use.
// No key is needed: the keys are public.
func (a *api) handleFalJWKS() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys, err := a.svc.SigningKeys(r.Context())
		if err != nil {
			a.writeFalError(w, r, a.falErrorOf(r, err))
			return
		}
		list := make([]map[string]any, 0, len(keys))
		for _, k := range keys {
			list = append(list, map[string]any{"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(k.Public),
				"kid": k.ID, "use": "sig", "alg": "EdDSA"})
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(falJWKSMaxAge.Seconds())))
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": list})
	})
}
