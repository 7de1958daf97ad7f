// Package payment sells credits by card through Stripe Checkout, with
// Stripe's official Go library (stripe-go) for the API and its webhook
// package for the signature check of delivered events. The domain reaches
// it through gengate.Payments and gengate.PaymentEventVerifier; the rules
// (bounds, once per session, refunds) are the domain's (topup.go).
package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	stripe "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/gengate/gengate"
)

// Metadata keys gengate sets on a Checkout Session (and its payment
// intent), read back from the completed session's event.
const (
	MetaAccount = "gengate_account"
	MetaCredits = "gengate_credits"
)

// DefaultTolerance is how old a signed event may be: stripe-go's default
// (webhook.DefaultTolerance, 5 minutes), against replays of old
// deliveries.
const DefaultTolerance = webhook.DefaultTolerance

// StripeConfig configures the Stripe adapter.
type StripeConfig struct {
	// SecretKey is the API key (sk_live_…, sk_test_… or rk_…);
	// WebhookSecret the signing secret of the webhook endpoint (whsec_…).
	SecretKey     string
	WebhookSecret string
	// APIURL is Stripe's API (default stripe.APIURL); tests and mirrors
	// point it elsewhere (stripe-mock).
	APIURL string
	// ProductName names the line item on the Checkout page.
	ProductName string
	// HTTPClient makes the API calls (default: 30 s timeout).
	HTTPClient *http.Client
	// Tolerance is how old an event's signature may be (default
	// DefaultTolerance).
	Tolerance time.Duration
}

// Stripe is the Stripe Checkout adapter.
type Stripe struct {
	cfg    StripeConfig
	client *stripe.Client
}

var (
	_ gengate.Payments             = (*Stripe)(nil)
	_ gengate.PaymentEventVerifier = (*Stripe)(nil)
)

// NewStripe returns the adapter for cfg.
func NewStripe(cfg StripeConfig) *Stripe {
	if cfg.APIURL == "" {
		cfg.APIURL = stripe.APIURL
	}
	if cfg.ProductName == "" {
		cfg.ProductName = "Credits"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL: stripe.String(cfg.APIURL), HTTPClient: cfg.HTTPClient,
		// Errors come back to gengate, which logs them its own way.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}, MaxNetworkRetries: stripe.Int64(2),
	})
	client := stripe.NewClient(cfg.SecretKey, stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend,
		Uploads: backend, MeterEvents: backend}))
	return &Stripe{cfg: cfg, client: client}
}

// CreateCheckout creates a Checkout Session in payment mode with one line
// item (credits × the credit's price) and the account and credits in its
// metadata and client_reference_id.
func (s *Stripe) CreateCheckout(ctx context.Context, c gengate.Checkout) (string, string, error) {
	meta := map[string]string{MetaAccount: c.AccountID, MetaCredits: strconv.Itoa(c.Credits)}
	params := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String(string(stripe.CheckoutSessionModePayment)),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(c.Currency),
				UnitAmount:  stripe.Int64(c.UnitAmount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(s.cfg.ProductName)},
			},
			Quantity: stripe.Int64(int64(c.Credits)),
		}},
		ClientReferenceID: stripe.String(c.AccountID),
		Metadata:          meta,
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: meta},
		SuccessURL:        stripe.String(c.SuccessURL),
		CancelURL:         stripe.String(c.CancelURL),
	}
	params.Context = ctx
	sess, err := s.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.HTTPStatusCode >= 500 || !errors.As(err, &se) {
			return "", "", &gengate.Error{Code: gengate.EOverloaded, Message: "Stripe could not be reached; try again shortly",
				Extra: map[string]any{"retryAfter": 5}}
		}
		return "", "", fmt.Errorf("stripe: create checkout session: %w", err)
	}
	return sess.ID, sess.URL, nil
}

// VerifyEvent checks the Stripe-Signature header with stripe-go's webhook
// package (HMAC-SHA256 of the timestamp and body, within Tolerance) and
// reads the events gengate acts on: a completed and paid Checkout Session
// that gengate created (its metadata), and a refunded charge. The event's
// API version may differ from stripe-go's: only fields stable across
// versions are read.
func (s *Stripe) VerifyEvent(payload []byte, signature string) (gengate.PaymentEvent, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, signature, s.cfg.WebhookSecret,
		webhook.ConstructEventOptions{Tolerance: s.cfg.Tolerance, IgnoreAPIVersionMismatch: true})
	if err != nil {
		return gengate.PaymentEvent{}, gengate.Errorf(gengate.ESignature, "the Stripe-Signature header does not hold for this body (%v)", err)
	}
	out := gengate.PaymentEvent{ID: ev.ID, Type: string(ev.Type)}
	if ev.Data == nil {
		return out, nil
	}
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		var cs stripe.CheckoutSession
		if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
			return out, fmt.Errorf("stripe: read checkout session of event %s: %w", ev.ID, err)
		}
		credits, _ := strconv.Atoi(cs.Metadata[MetaCredits])
		account := cs.Metadata[MetaAccount]
		if account == "" {
			account = cs.ClientReferenceID
		}
		if cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid || cs.Mode != stripe.CheckoutSessionModePayment ||
			account == "" || credits < 1 {
			return out, nil // unpaid yet (async methods), or not a gengate top-up
		}
		p := &gengate.Purchase{SessionID: cs.ID, AccountID: account, Credits: credits, AmountTotal: cs.AmountTotal,
			Currency: string(cs.Currency)}
		if cs.PaymentIntent != nil {
			p.PaymentIntent = cs.PaymentIntent.ID
		}
		out.Purchase = p
	case "charge.refunded":
		var ch stripe.Charge
		if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil {
			return out, fmt.Errorf("stripe: read charge of event %s: %w", ev.ID, err)
		}
		if ch.PaymentIntent != nil && ch.PaymentIntent.ID != "" {
			out.Refund = &gengate.PurchaseRefund{PaymentIntent: ch.PaymentIntent.ID, Amount: ch.Amount, AmountRefunded: ch.AmountRefunded}
		}
	}
	return out, nil
}
