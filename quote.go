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
// fetched) and returns what it would cost. Nothing is stored or charged.
func (s *Service) Quote(ctx context.Context, accountID string, body []byte) (*Quote, error) {
	return s.QuoteFrom(ctx, accountID, bytes.NewReader(body))
}

// QuoteFrom is Quote of a body decoded as it is read (DecodeRequest), never
// held whole.
func (s *Service) QuoteFrom(ctx context.Context, accountID string, body io.Reader) (*Quote, error) {
	req, err := s.Catalog.DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	route, err := s.chooseRoute(req)
	if err != nil {
		return nil, err
	}
	acct, err := s.Store.FindAccount(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return &Quote{ModelID: req.Model.ID, Type: req.Model.Type, Cost: req.Model.Quote(req.Options),
		Balance: acct.Balance, Engine: route.Engine, Placeholder: route.Engine == "sandbox"}, nil
}
