package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/gengate/gengate"
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
	f := flag.NewFlagSet("providers check", flag.ContinueOnError)
	f.SetOutput(stderr)
	configFile := f.String("config", getenv("GENGATE_CONFIG"), "YAML file of upstream providers and routes, as serve's --config (env GENGATE_CONFIG)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	fc, err := loadFileConfig(*configFile)
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
	return nil
}
