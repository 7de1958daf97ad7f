package gengate

import (
	"context"
	"fmt"
	"time"
)

// This file holds the rules of card top-ups: an account holder buys
// credits through a payment provider's hosted checkout (Stripe Checkout,
// internal/stripe), and the provider's signed event grants them. The rules
// are the provider's own integration guide's: verify the event, then fulfil
// idempotently. A paid checkout grants its credits once, whatever the
// number of deliveries: the store records the checkout and grants in one
// transaction, keyed by the checkout's id, so a crash between the event and
// the grant loses nothing (the provider delivers again) and a redelivery
// grants nothing twice. A refund takes the credits back where the balance
// allows; what it cannot take back is kept on the purchase for the operator
// to see.

// Payments is what the domain needs of a card payment provider.
type Payments interface {
	// CreateCheckout opens a hosted checkout for c and returns its id and
	// the address to send the buyer to.
	CreateCheckout(ctx context.Context, c Checkout) (id, url string, err error)
}

// Checkout is one top-up being bought: Credits credits at UnitAmount
// (the currency's smallest unit, e.g. cents) each.
type Checkout struct {
	AccountID  string
	Credits    int
	UnitAmount int64
	Currency   string
	SuccessURL string
	CancelURL  string
}

// TopUpTerms are the operator's terms of card top-ups.
type TopUpTerms struct {
	// UnitAmount is the price of one credit in the currency's smallest
	// unit; Currency is an ISO 4217 code in lower case.
	UnitAmount int64
	Currency   string
	// Min and Max bound one top-up, in credits.
	Min, Max int
}

// Purchase is a paid checkout as its provider reports it.
type Purchase struct {
	SessionID     string
	AccountID     string
	Credits       int
	PaymentIntent string
	AmountTotal   int64
	Currency      string
}

// PurchaseRefund is a refund of a purchase's payment: AmountRefunded of
// Amount in all so far (cumulative, as the provider reports it).
type PurchaseRefund struct {
	PaymentIntent  string
	Amount         int64
	AmountRefunded int64
}

// RefundOutcome is what a refund did: the credits taken back by this
// event, and the credits the refunds so far could not take back (the
// balance did not hold them).
type RefundOutcome struct {
	Found       bool
	AccountID   string
	SessionID   string
	TakenBack   int
	Unrecovered int
}

// StartTopUp opens a checkout for credits, within the operator's bounds
// (EInvalid naming credits otherwise). ENotFound when no payment provider
// is configured.
func (s *Service) StartTopUp(ctx context.Context, accountID string, credits int, successURL, cancelURL string) (id, url string, err error) {
	if s.Payments == nil {
		return "", "", Errorf(ENotFound, "card top-ups are not configured on this server")
	}
	t := s.TopUp
	if credits < t.Min || credits > t.Max {
		return "", "", &Error{Code: EInvalid, Message: fmt.Sprintf("credits must be a whole number from %d to %d", t.Min, t.Max),
			Fields: []FieldError{{Field: "credits", Code: FieldValue, Message: fmt.Sprintf("must be from %d to %d", t.Min, t.Max)}}}
	}
	id, url, err = s.Payments.CreateCheckout(ctx, Checkout{AccountID: accountID, Credits: credits, UnitAmount: t.UnitAmount,
		Currency: t.Currency, SuccessURL: successURL, CancelURL: cancelURL})
	if err != nil {
		return "", "", err
	}
	s.log().InfoContext(ctx, "checkout started", "account", accountID, "credits", credits, "session", id)
	return id, url, nil
}

// Purchased grants a paid checkout's credits, once per checkout; it
// reports whether this call granted them (false: an earlier delivery did).
func (s *Service) Purchased(ctx context.Context, p Purchase) (bool, error) {
	if p.SessionID == "" || p.AccountID == "" || p.Credits < 1 {
		return false, Errorf(EInvalid, "a purchase needs its session, account and credits")
	}
	granted, balance, err := s.Store.GrantPurchase(ctx, p, s.now())
	if err != nil {
		return false, err
	}
	if granted {
		s.log().InfoContext(ctx, "purchase granted", "account", p.AccountID, "credits", p.Credits, "session", p.SessionID,
			"balance", balance)
	}
	return granted, nil
}

// PurchaseRefunded takes back the credits a refund calls for, as far as
// the balance allows; what it cannot is logged for the operator and kept
// on the purchase (Unrecovered).
func (s *Service) PurchaseRefunded(ctx context.Context, r PurchaseRefund) (RefundOutcome, error) {
	out, err := s.Store.RefundPurchase(ctx, r, s.now())
	if err != nil || !out.Found {
		return out, err
	}
	if out.TakenBack > 0 {
		s.log().InfoContext(ctx, "purchase refunded", "account", out.AccountID, "session", out.SessionID, "creditsTakenBack", out.TakenBack)
	}
	if out.Unrecovered > 0 {
		s.log().ErrorContext(ctx, "refunded purchase not fully taken back: the balance did not hold the credits",
			"account", out.AccountID, "session", out.SessionID, "unrecoveredCredits", out.Unrecovered)
	}
	return out, nil
}

// RefundCredits is how many of a purchase's credits refunds of refunded
// out of amount call for: proportional, rounded down, all of them once the
// whole amount is refunded.
func RefundCredits(credits int, amount, refunded int64) int {
	switch {
	case amount <= 0 || refunded <= 0:
		return 0
	case refunded >= amount:
		return credits
	}
	return int(int64(credits) * refunded / amount)
}

// PurchaseRecord is a stored purchase, as operators see it.
type PurchaseRecord struct {
	SessionID       string
	AccountID       string
	Credits         int
	PaymentIntent   string
	AmountTotal     int64
	Currency        string
	CreatedAt       time.Time
	RefundedCredits int // what the refunds so far call for
	TakenBack       int // what was taken back
}

// ESignature refuses a payment provider's event whose signature is wrong
// or stale: 400, nothing changed.
const ESignature = "SIGNATURE_INVALID"

// PaymentEvent is a verified event of the payment provider: a paid
// checkout, a refund, or something gengate does not act on (both nil).
type PaymentEvent struct {
	ID       string
	Type     string
	Purchase *Purchase
	Refund   *PurchaseRefund
}

// PaymentWebhook verifies and applies one delivery of the provider's
// event: a paid checkout is granted once, a refund taken back. Any error
// but ESignature asks the provider to deliver again (it retries for days),
// and since the grant and its record commit together, delivering again is
// always safe.
func (s *Service) PaymentWebhook(ctx context.Context, payload []byte, signature string) (PaymentEvent, error) {
	v, ok := s.Payments.(PaymentEventVerifier)
	if !ok {
		return PaymentEvent{}, Errorf(ENotFound, "card top-ups are not configured on this server")
	}
	ev, err := v.VerifyEvent(payload, signature)
	if err != nil {
		return ev, err
	}
	switch {
	case ev.Purchase != nil:
		_, err = s.Purchased(ctx, *ev.Purchase)
	case ev.Refund != nil:
		_, err = s.PurchaseRefunded(ctx, *ev.Refund)
	}
	return ev, err
}
