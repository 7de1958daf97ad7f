package gengate

import (
	"bytes"
	"context"
	"io"
)

// Quote is the price of a generation request, found without running it.
type Quote struct {
	ModelID     string
	Type        string
	Cost        int
	Balance     int
	Engine      string
	Placeholder bool
}

// Quote validates a generate body as Generate does (inputs are not
// fetched) and returns what the key would be charged for it: for a test
// key, as for its generations (testkeys.go), nothing, on the sandbox.
// Nothing is stored or charged.
func (s *Service) Quote(ctx context.Context, key *APIKey, body []byte) (*Quote, error) {
	return s.QuoteFrom(ctx, key, bytes.NewReader(body))
}

// QuoteFrom is Quote of a body decoded as it is read (DecodeRequest), never
// held whole.
func (s *Service) QuoteFrom(ctx context.Context, key *APIKey, body io.Reader) (*Quote, error) {
	req, err := s.Catalog.DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	route, cost, err := s.routeAndCost(key, req)
	if err != nil {
		return nil, err
	}
	acct, err := s.Store.FindAccount(ctx, key.AccountID)
	if err != nil {
		return nil, err
	}
	return &Quote{ModelID: req.Model.ID, Type: req.Model.Type, Cost: cost,
		Balance: acct.Balance, Engine: route.Engine, Placeholder: route.Engine == "sandbox"}, nil
}
