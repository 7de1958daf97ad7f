package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/payment"
)

// BillingFlags are serve's settings for selling credits: the pace of
// redemption attempts, and card top-ups through Stripe Checkout
// (docs/selling.md).
type BillingFlags struct {
	RedeemRate  float64
	RedeemBurst int
	// StripeSecretKey turns card top-ups on; StripeWebhookSecret checks
	// Stripe's events; StripeAPIURL is Stripe's API (tests: stripe-mock).
	StripeSecretKey     string
	StripeWebhookSecret string
	StripeAPIURL        string
	// CreditPrice is one credit's price in Currency's main unit; MinTopUp
	// and MaxTopUp bound one top-up in credits.
	CreditPrice float64
	Currency    string
	MinTopUp    int
	MaxTopUp    int
}

// Defaults of one top-up's bounds, in credits.
const (
	DefaultMinTopUp = 100
	DefaultMaxTopUp = 1_000_000
)

func (b *BillingFlags) add(f *flags) error {
	f.str(&b.StripeSecretKey, "stripe-secret-key", f.getenv("STRIPE_SECRET_KEY"),
		"Stripe's secret API key (sk_…, rk_…): turns card top-ups on (prefer STRIPE_SECRET_KEY)")
	f.str(&b.StripeWebhookSecret, "stripe-webhook-secret", f.getenv("STRIPE_WEBHOOK_SECRET"),
		"signing secret (whsec_…) of the Stripe webhook endpoint /api/v1/stripe/webhook (prefer STRIPE_WEBHOOK_SECRET)")
	f.str(&b.StripeAPIURL, "stripe-api-url", "", "Stripe's API address (default https://api.stripe.com; tests and mirrors)")
	f.str(&b.Currency, "currency", "usd", "ISO 4217 currency of --credit-price")
	return errors.Join(
		f.float(&b.RedeemRate, "redeem-rate-limit", gengate.DefaultRedeemRate,
			"redemption attempts per second per account (0: no limit); over it 429 RATE_LIMITED"),
		f.integer(&b.RedeemBurst, "redeem-rate-burst", gengate.DefaultRedeemBurst,
			"redemption attempts an account may make at once under --redeem-rate-limit"),
		f.float(&b.CreditPrice, "credit-price", 0, "price of one credit in the currency's main unit, e.g. 0.01 (required with --stripe-secret-key)"),
		f.integer(&b.MinTopUp, "min-top-up", DefaultMinTopUp, "fewest credits one card top-up buys"),
		f.integer(&b.MaxTopUp, "max-top-up", DefaultMaxTopUp, "most credits one card top-up buys"),
	)
}

func (b *BillingFlags) validate() error {
	switch {
	case b.RedeemRate < 0 || b.RedeemBurst < 0:
		return errors.New("--redeem-rate-limit and --redeem-rate-burst must be ≥ 0")
	case b.StripeSecretKey == "":
		return nil
	case b.StripeWebhookSecret == "":
		return errors.New("--stripe-webhook-secret (STRIPE_WEBHOOK_SECRET) is required with --stripe-secret-key")
	case len(b.Currency) != 3 || strings.ToLower(b.Currency) != b.Currency:
		return fmt.Errorf("--currency must be a lower-case ISO 4217 code such as usd, not %q", b.Currency)
	case b.MinTopUp < 1 || b.MaxTopUp < b.MinTopUp || b.MaxTopUp > 1<<40:
		return errors.New("--min-top-up must be ≥ 1 and --max-top-up at least --min-top-up")
	}
	if _, err := b.unitAmount(); err != nil {
		return err
	}
	return nil
}

// zeroDecimal and threeDecimal are the currencies whose smallest unit is
// not the hundredth (Stripe's "Zero-decimal" and "Three-decimal" lists).
var (
	zeroDecimal  = "bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf"
	threeDecimal = "bhd jod kwd omr tnd"
)

// unitAmount is --credit-price in the currency's smallest unit, which
// Stripe's unit_amount takes: it must be a whole number of it.
func (b *BillingFlags) unitAmount() (int64, error) {
	scale := 100.0
	switch {
	case strings.Contains(zeroDecimal, b.Currency):
		scale = 1
	case strings.Contains(threeDecimal, b.Currency):
		scale = 1000
	}
	v := b.CreditPrice * scale
	n := math.Round(v)
	if b.CreditPrice <= 0 || math.Abs(v-n) > 1e-6 || n > 1<<40 {
		return 0, fmt.Errorf("--credit-price must be above 0 and a whole number of %s's smallest unit (1/%v), not %v",
			b.Currency, scale, b.CreditPrice)
	}
	return int64(n), nil
}

// apply sets the service's billing parts from the flags.
func (b *BillingFlags) apply(svc *gengate.Service) {
	if b.RedeemRate > 0 {
		svc.RedeemLimit = httpapi.NewLimiter(b.RedeemRate, b.RedeemBurst)
	}
	if b.StripeSecretKey == "" {
		return
	}
	unit, _ := b.unitAmount() // validated
	svc.Payments = payment.NewStripe(payment.StripeConfig{SecretKey: b.StripeSecretKey,
		WebhookSecret: b.StripeWebhookSecret, APIURL: b.StripeAPIURL})
	svc.TopUp = gengate.TopUpTerms{UnitAmount: unit, Currency: b.Currency, Min: b.MinTopUp, Max: b.MaxTopUp}
}
