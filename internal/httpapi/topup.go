package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/gengate/gengate"
)

// This file is card top-ups over HTTP: a holder starts a Stripe Checkout
// (the rules are gengate/topup.go, the Stripe calls internal/payment), and
// Stripe delivers its signed events to the webhook.

// MaxPaymentEvent caps the body of a delivered payment event: Stripe's
// events are a few KiB; a Checkout Session with its line items stays far
// below this.
const MaxPaymentEvent = 1 << 20

// handleCheckout is POST /api/v1/account/checkout {"credits"}: 201 with
// the Checkout Session's id and the address of its Stripe-hosted page.
func (a *api) handleCheckout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Credits int `json:"credits"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		base := a.baseURL(r)
		id, url, err := a.svc.StartTopUp(r.Context(), apiKey(r).AccountID, req.Credits,
			base+"/#/?checkout=success", base+"/#/?checkout=canceled")
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"id": id, "url": url})
	})
}

// handlePaymentWebhook is POST /api/v1/stripe/webhook: Stripe's signed
// events. 200 once applied (or for an event gengate does not act on); 400
// SIGNATURE_INVALID for a wrong or stale signature, nothing changed; any
// other failure is a 5xx, which Stripe delivers again later.
func (a *api) handlePaymentWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read whole: the signature covers the exact bytes. The route's
		// declaration (area_routes.go) caps it at MaxPaymentEvent.
		opened, err := openBody(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body, err := io.ReadAll(opened)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				err = gengate.Errorf(gengate.ETooLarge, "the event is larger than %d bytes", MaxPaymentEvent)
			}
			writeError(w, r, a.log, err)
			return
		}
		ev, err := a.svc.PaymentWebhook(r.Context(), body, r.Header.Get("Stripe-Signature"))
		if err != nil {
			if gengate.ErrorCode(err) == gengate.ESignature {
				a.log.WarnContext(r.Context(), "payment event refused", "err", err, "requestId", requestID(r))
			}
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"received": true, "id": ev.ID})
	})
}

// topUpConfig is what the console needs to offer top-ups, absent when
// card top-ups are not configured.
func (a *api) topUpConfig() map[string]any {
	if a.svc.Payments == nil {
		return nil
	}
	t := a.svc.TopUp
	return map[string]any{"currency": t.Currency, "unitAmount": t.UnitAmount, "minCredits": t.Min, "maxCredits": t.Max}
}

// handleAdminPurchases is GET /api/v1/admin/purchases?unrecovered=&limit=:
// card top-ups, newest first; with unrecovered=true only those whose
// refunds could not all be taken back.
func (a *api) handleAdminPurchases() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, err := pageLimit(r)
		unrecovered := false
		if v := r.URL.Query().Get("unrecovered"); v != "" && err == nil {
			switch v {
			case "true":
				unrecovered = true
			case "false":
			default:
				err = badField("unrecovered", `must be "true" or "false"`)
			}
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		ps, err := a.svc.Store.Purchases(r.Context(), unrecovered, limit)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		data := make([]map[string]any, 0, len(ps))
		for _, p := range ps {
			data = append(data, map[string]any{"sessionId": p.SessionID, "accountId": p.AccountID, "credits": p.Credits,
				"paymentIntent": p.PaymentIntent, "amountTotal": p.AmountTotal, "currency": p.Currency,
				"createdAt": timestamp(p.CreatedAt), "refundedCredits": p.RefundedCredits, "takenBack": p.TakenBack})
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": data})
	})
}
