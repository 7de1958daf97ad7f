package main

import (
	"errors"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// BillingFlags are serve's settings for selling credits: the pace of
// redemption attempts.
type BillingFlags struct {
	RedeemRate  float64
	RedeemBurst int
}

func (b *BillingFlags) add(f *flags) error {
	return errors.Join(
		f.float(&b.RedeemRate, "redeem-rate-limit", gengate.DefaultRedeemRate,
			"redemption attempts per second per account (0: no limit); over it 429 RATE_LIMITED"),
		f.integer(&b.RedeemBurst, "redeem-rate-burst", gengate.DefaultRedeemBurst,
			"redemption attempts an account may make at once under --redeem-rate-limit"),
	)
}

func (b *BillingFlags) validate() error {
	if b.RedeemRate < 0 || b.RedeemBurst < 0 {
		return errors.New("--redeem-rate-limit and --redeem-rate-burst must be ≥ 0")
	}
	return nil
}

// apply sets the service's billing parts from the flags.
func (b *BillingFlags) apply(svc *gengate.Service) {
	if b.RedeemRate > 0 {
		svc.RedeemLimit = httpapi.NewLimiter(b.RedeemRate, b.RedeemBurst)
	}
}
