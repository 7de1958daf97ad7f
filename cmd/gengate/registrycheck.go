package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// providersCheck is "gengate providers check": every route of every
// configured provider (environment variables and --config, as serve reads
// them) checked against its provider's model registry, once, as a table:
// model, provider, upstream id, state (live, unknown, deprecated,
// unchecked) and the upstream's published price. It changes nothing; a
// running serve does the same check at start and every
// --registry-check-interval, and takes the routes found unknown or
// deprecated out of routing.
func providersCheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f := newFlags("providers check", getenv, stderr)
	var configFile, data, database string
	f.str(&configFile, "config", "", "YAML file of upstream providers and routes, as serve's --config")
	f.storage(&data, &database)
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	fc, err := loadFileConfig(configFile)
	if err != nil {
		return err
	}
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		return err
	}
	engs, err := buildEngines(fc, catalog, getenv, 0, engineFlags{})
	if err != nil {
		return err
	}
	if len(engs.Providers) == 0 {
		return fmt.Errorf("no upstream provider is configured (set FAL_KEY, REPLICATE_API_TOKEN, OPENAI_API_KEY, GEMINI_API_KEY or COMFYUI_URL, or pass --config)")
	}
	svc := &gengate.Service{Catalog: catalog, Engines: engs.All, Routes: engs.Routes, ProvidersConfigured: true,
		Registry: &gengate.Registry{}, Log: slog.New(slog.DiscardHandler)}
	checks := svc.CheckRegistries(ctx)
	fmt.Fprintf(stdout, "%-28s  %-10s  %-58s  %-10s  %s\n", "MODEL", "PROVIDER", "UPSTREAM", "STATE", "UPSTREAM PRICE")
	for _, c := range checks {
		price := c.Price
		if price == "" {
			price = "-"
		}
		fmt.Fprintf(stdout, "%-28s  %-10s  %-58s  %-10s  %s\n", c.ModelID, c.Engine, c.Upstream, c.State, price)
	}
	rep := svc.Registry.Report()
	for _, c := range rep.Retired {
		fmt.Fprintf(stdout, "out of routing: %s on %s (%s): %s\n", c.ModelID, c.Engine, c.Upstream, c.Reason)
	}
	for name, why := range rep.Unreachable {
		fmt.Fprintf(stdout, "%s: %s; its routes are unchanged\n", name, why)
	}
	return printCosts(ctx, stdout, database, data)
}

// printCosts prints the server's last 30 days by model and provider:
// credits charged against upstream cost (gengate.UpstreamCosts), read from
// its database (--data or --database, as serve's); without one, says so.
func printCosts(ctx context.Context, stdout io.Writer, database, data string) error {
	st, err := sqlstore.Open(ctx, database, data, sqlstore.WithExisting())
	var none *sqlstore.NoDatabaseError
	if errors.As(err, &none) {
		fmt.Fprintf(stdout, "\nno database at --data %s: give the server's --data or --database for its 30-day credits and upstream costs\n", data)
		return nil
	}
	if err != nil {
		return err
	}
	defer st.Close()
	costs, err := st.UpstreamCosts(ctx, time.Now().Add(-gengate.CostWindow))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nlast 30 days: credits charged vs upstream cost (USD)\n")
	fmt.Fprintf(stdout, "%-28s  %-10s  %6s  %8s  %6s  %12s  %s\n", "MODEL", "PROVIDER", "TASKS", "CREDITS", "PRICED", "UPSTREAM USD", "CREDITS PER USD")
	for _, c := range costs {
		cost, ratio := "-", "-"
		if c.Priced > 0 {
			cost = strconv.FormatFloat(float64(c.UpstreamMicroUSD)/1e6, 'f', 6, 64)
			if c.UpstreamMicroUSD > 0 {
				ratio = strconv.FormatFloat(float64(c.PricedCredits)/(float64(c.UpstreamMicroUSD)/1e6), 'f', 1, 64)
			}
		}
		fmt.Fprintf(stdout, "%-28s  %-10s  %6d  %8d  %6d  %12s  %s\n", c.ModelID, c.Engine, c.Tasks, c.Credits, c.Priced, cost, ratio)
	}
	if len(costs) == 0 {
		fmt.Fprintln(stdout, "no task succeeded on a provider in the last 30 days")
	}
	return nil
}
